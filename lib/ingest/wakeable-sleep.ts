/**
 * A pause a background loop can cut short: the forwarders (forwarder.ts over SQLite,
 * postgres-forwarder.ts over Postgres) sleep between polls and after failures, and `stop`
 * (or a test) wakes them at once instead of waiting the pause out. The timer is unref'd:
 * a sleeping loop never keeps the process alive.
 */
export class WakeableSleep {
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = undefined;
        resolve();
      }, ms);
      timer.unref();
      this.sleeper = { timer, resolve };
    });
  }

  /** Ends the pause in progress, if any. */
  wake(): void {
    const s = this.sleeper;
    if (!s) return;
    this.sleeper = undefined;
    clearTimeout(s.timer);
    s.resolve();
  }
}
