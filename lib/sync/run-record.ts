import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { syncRuns, type AppRow } from "@/db/schema";
import { logger, type Logger } from "@/lib/log/logger";
import { acquireLock, releaseLock } from "../locks/sync-lock";
import { findResumePoint, type PageCursor, type ResumePoint } from "./resume";
import type { SyncSummary, SyncTrigger } from "./summary";
import type { SyncCounts } from "./writer";

/** A run's row in sync_runs and the app's lock around it: how a run begins and ends. */

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The cursor as the run row keeps it. */
export function cursorOf(c: PageCursor): { perPage: number; committedPage: number | null; announcedTotal: number | null } {
  return { perPage: c.pageSize, committedPage: c.committedPage, announcedTotal: c.announcedTotal };
}

export function progressOf(s: SyncSummary): SyncCounts {
  return { pages: s.pages, fetched: s.fetched, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged, skipped: s.skipped, refreshed: s.refreshed };
}

/**
 * Takes the app's lock, closes runs a dead holder left `running`, finds where an
 * unfinished backfill resumes and records the new run. Null when another sync holds the
 * lock (the summary says so).
 */
export function beginRun(
  db: Db,
  app: AppRow,
  owner: string,
  leaseMs: number,
  options: { trigger: SyncTrigger; perPage?: number; fromStart?: boolean; log?: Logger },
  summary: SyncSummary,
  now: number,
): { runPk: number; resume: ResumePoint | null } | null {
  const lock = acquireLock(db, app.pk, owner, leaseMs);
  if (!lock.acquired) {
    summary.status = "already_running";
    summary.error = `a sync of app ${app.appId} is already running (holder ${lock.owner}, since ${new Date(lock.acquiredMs).toISOString()})`;
    return null;
  }
  const log = options.log ?? logger;
  if (lock.tookOverFrom) log.warn({ appId: app.appId, previousOwner: lock.tookOverFrom }, "took over an abandoned sync lock");
  try {
    // Any run still 'running' for this app belongs to a holder that is gone: we hold the lock.
    db.$client
      .prepare("UPDATE sync_runs SET status = 'failed', finished_ms = ?, error = ? WHERE app_pk = ? AND status = 'running'")
      .run(now, "interrupted: the process running this sync stopped before it finished", app.pk);
    const resume = app.backfillCompletedMs === null && options.fromStart !== true ? findResumePoint(db, app.pk) : null;
    const perPage = resume?.perPage ?? options.perPage ?? 1000;
    const run = db
      .insert(syncRuns)
      .values({
        appPk: app.pk, kind: summary.kind, trigger: options.trigger, status: "running", startedMs: now,
        perPage, startPage: resume?.page ?? 1, resumedFromRun: resume?.fromRun ?? null,
      })
      .returning({ pk: syncRuns.pk })
      .get();
    return { runPk: run.pk, resume };
  } catch (err) {
    releaseLock(db, app.pk, owner);
    throw err;
  }
}

/**
 * The run's final row, then the lock. Either may fail on a warehouse that is full or
 * locked: the summary still carries the outcome, a row left `running` is closed as
 * interrupted by the next run, and a lock left behind by a process that exits is taken
 * over at once (lib/locks/sync-lock.ts).
 */
export function finishRun(
  db: Db,
  app: AppRow,
  owner: string,
  runPk: number,
  summary: SyncSummary,
  cursor: ReturnType<typeof cursorOf>,
  log: Logger,
): void {
  try {
    db.update(syncRuns)
      .set({
        status: summary.status === "succeeded" ? "succeeded" : "failed",
        finishedMs: Date.now(),
        kind: summary.kind,
        ...progressOf(summary),
        ...cursor,
        error: summary.error,
        skippedRecords: summary.skippedRecords.length ? summary.skippedRecords : null,
      })
      .where(eq(syncRuns.pk, runPk))
      .run();
  } catch (err) {
    log.error({ err: errorText(err) }, "could not record the end of the sync run");
  }
  try {
    releaseLock(db, app.pk, owner);
  } catch (err) {
    log.error({ err: errorText(err) }, "could not release the sync lock; the next run takes it over");
  }
}
