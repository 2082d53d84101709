import type { Db } from "@/db/client";
import { logger } from "@/lib/log/logger";
import { syncAll, type SyncSummary } from "./sync-app";

/**
 * The in-server schedule: syncAll every `intervalSeconds` (0 = off). The next run is
 * timed from the end of the previous one, so runs never overlap — a plain re-armed
 * timer does that with less machinery than a cron expression for "every N seconds".
 * An app that synced well within the last half interval is left for the next tick: on
 * several servers over one state, another server's schedule (or a "Sync now") just did it.
 */
export interface SyncScheduler {
  stop(): Promise<void>;
  /** Resolves when the current run (if any) ends. */
  idle(): Promise<void>;
}

export interface SchedulerOptions {
  intervalSeconds: number;
  /** Delay before the first run (default: one interval, so a starting server is not slowed). */
  firstRunAfterMs?: number;
  onRun?: (results: SyncSummary[]) => void;
}

export function startSyncScheduler(db: Db, options: SchedulerOptions): SyncScheduler {
  const log = logger.child({ part: "sync-scheduler" });
  const intervalMs = Math.max(0, Math.floor(options.intervalSeconds * 1000));
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let stopped = intervalMs === 0;
  const abort = new AbortController();

  const tick = () => {
    timer = undefined;
    if (stopped) return;
    current = (async () => {
      try {
        const results = await syncAll(db, { trigger: "schedule", signal: abort.signal, skipSyncedWithinMs: intervalMs / 2 });
        for (const r of results) {
          if (r.status === "failed") log.warn({ appId: r.appId, error: r.error }, "scheduled sync failed");
        }
        options.onRun?.(results);
      } catch (err) {
        log.error({ err: err instanceof Error ? err.message : String(err) }, "scheduled sync crashed");
      } finally {
        current = undefined;
        if (!stopped) arm(intervalMs);
      }
    })();
  };
  const arm = (ms: number) => {
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  if (!stopped) arm(options.firstRunAfterMs ?? intervalMs);

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      abort.abort(new Error("sync scheduler stopped"));
      await current;
    },
    idle: async () => {
      await current;
    },
  };
}
