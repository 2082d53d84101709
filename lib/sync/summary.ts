/**
 * What one sync run reports: its counts, the records it skipped and where its time
 * went. Its own module, so that the run's bookkeeping (run-state.ts) and the run itself
 * (sync-app.ts) share it without importing each other.
 */
import type { SyncCounts } from "./writer";

export type SyncTrigger = "schedule" | "cli" | "manual" | "demo" | "test";

export interface SkippedRecord {
  sessionId: string | null;
  reason: string;
}

export interface SyncTimings {
  wallMs: number;
  /** Time the loop waited for the next page (fetch not hidden by pipelining). */
  fetchWaitMs: number;
  /** Sum of the page requests' own durations (overlaps with parsing and writing). */
  fetchMs: number;
  /** Validation, raw JSON, hashing and classification. */
  parseMs: number;
  /** The write transactions alone. */
  dbMs: number;
  refreshMs: number;
  /**
   * Share of the run's time each thread was busy (event-loop utilisation, 0–1): this
   * thread (fetch, parse, hash) and the write worker, when there is one. The narrowest
   * stage is the one near 1.
   */
  mainBusy?: number;
  writerBusy?: number;
  /**
   * CPU time (ms) of this thread during the run and of the write worker from its first
   * write (Linux only; thread-cpu.ts): per call, the cost of each side.
   */
  mainCpuMs?: number;
  writerCpuMs?: number;
}

export interface SyncSummary extends SyncCounts {
  appId: string;
  status: "succeeded" | "failed" | "already_running";
  runPk: number | null;
  kind: "full" | "incremental";
  /** Ongoing calls the platform no longer knows (404 on refresh). */
  refreshMissing: number;
  /** Incremental run that stopped at calls already stored. */
  stoppedEarly: boolean;
  /** The page a resumed backfill continued from (null: the run began at page 1). */
  resumedFromPage: number | null;
  error: string | null;
  skippedRecords: SkippedRecord[];
  /** Wall time of the run (same as timings.wallMs). */
  durationMs: number;
  timings: SyncTimings;
}
