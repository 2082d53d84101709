import type Database from "better-sqlite3";

/**
 * After a batch could not be written (disk full, a lock held past the busy timeout,
 * an I/O error) the ingest stops trying for a while and answers 503 with Retry-After
 * at once. Without it every delivery of a locked warehouse waited out the busy timeout
 * (5 s) on the event loop, and pages and reports froze with the webhooks. The pause
 * starts at 1 s and doubles to 5 s; while paused, the next try waits at most a short
 * busy timeout, so that probing a held lock costs the event loop little. The first
 * successful write restores everything.
 */
export interface WriteBackoffOptions {
  firstPauseMs?: number;
  maxPauseMs?: number;
  /** The busy timeout of tries made after a failure (ms). */
  probeBusyTimeoutMs?: number;
}

export class WriteBackoff {
  private untilMs = 0;
  private pauseMs = 0;
  private readonly normalBusyTimeoutMs: number;
  private readonly firstPauseMs: number;
  private readonly maxPauseMs: number;
  private readonly probeBusyTimeoutMs: number;

  constructor(private readonly sqlite: Database.Database, options: WriteBackoffOptions = {}) {
    this.normalBusyTimeoutMs = Number(sqlite.pragma("busy_timeout", { simple: true }));
    this.firstPauseMs = options.firstPauseMs ?? 1_000;
    this.maxPauseMs = options.maxPauseMs ?? 5_000;
    this.probeBusyTimeoutMs = Math.min(options.probeBusyTimeoutMs ?? 250, this.normalBusyTimeoutMs);
  }

  /** Milliseconds before writes are tried again; 0 when they may be tried now. */
  remainingMs(nowMs = Date.now()): number {
    return Math.max(0, this.untilMs - nowMs);
  }

  /** Retry-After for an answer given now, in whole seconds (at least 1). */
  retryAfterSeconds(nowMs = Date.now()): number {
    return Math.max(1, Math.ceil((this.remainingMs(nowMs) || this.firstPauseMs) / 1000));
  }

  get failing(): boolean {
    return this.pauseMs > 0;
  }

  failed(nowMs = Date.now()): void {
    if (this.pauseMs === 0) this.sqlite.pragma(`busy_timeout = ${this.probeBusyTimeoutMs}`);
    this.pauseMs = this.pauseMs === 0 ? this.firstPauseMs : Math.min(this.pauseMs * 2, this.maxPauseMs);
    this.untilMs = nowMs + this.pauseMs;
  }

  succeeded(): void {
    if (this.pauseMs === 0) return;
    this.pauseMs = 0;
    this.untilMs = 0;
    this.sqlite.pragma(`busy_timeout = ${this.normalBusyTimeoutMs}`);
  }
}
