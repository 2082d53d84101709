import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { tablesOf } from "@/db/state";
import { logger, type Logger } from "@/lib/log/logger";
import { releaseSyncLease, renewSyncLease, takeSyncLease } from "../locks/sync-lease";
import { findResumePoint, type PageCursor, type ResumePoint } from "./resume";
import type { SyncSummary, SyncTrigger } from "./summary";
import type { SyncCounts, SyncProgress } from "./writer";

/**
 * A run's row in sync_runs and the app's lease around it: how a run begins, keeps its
 * lease, records progress and ends. Written once for both stores of Callboard's state —
 * the SQLite file and Postgres (docs/decisions/0042-state-queries-in-two-dialects.md):
 * every query is awaited, on the tables `tablesOf(db)` gives.
 */

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The cursor as the run row keeps it. */
export function cursorOf(c: PageCursor): { perPage: number; committedPage: number | null; announcedTotal: number | null } {
  return { perPage: c.pageSize, committedPage: c.committedPage, announcedTotal: c.announcedTotal };
}

export function progressOf(s: SyncSummary): SyncCounts {
  return { pages: s.pages, fetched: s.fetched, inserted: s.inserted, updated: s.updated, unchanged: s.unchanged, skipped: s.skipped, refreshed: s.refreshed };
}

/** The words a refused run carries, on either store: which app, who holds it, since when. */
export function alreadyRunningMessage(appId: string, holder: string, sinceMs: number): string {
  return `a sync of app ${appId} is already running (holder ${holder}, since ${new Date(sinceMs).toISOString()})`;
}

/**
 * Takes the app's lease, closes runs a dead holder left `running`, finds where an
 * unfinished backfill resumes and records the new run. Null when another sync holds the
 * lease (the summary says so).
 */
export async function beginRun(
  db: Db,
  app: AppRow,
  owner: string,
  leaseMs: number,
  options: { trigger: SyncTrigger; perPage?: number; fromStart?: boolean; log?: Logger },
  summary: SyncSummary,
  now: number,
): Promise<{ runPk: number; resume: ResumePoint | null } | null> {
  const lock = await takeSyncLease(db, app.pk, owner, leaseMs);
  if (!lock.acquired) {
    summary.status = "already_running";
    summary.error = alreadyRunningMessage(app.appId, lock.owner, lock.acquiredMs);
    return null;
  }
  const log = options.log ?? logger;
  if (lock.tookOverFrom) log.warn({ appId: app.appId, previousOwner: lock.tookOverFrom }, "took over an abandoned sync lock");
  const { syncRuns } = tablesOf(db);
  try {
    // Any run still 'running' for this app belongs to a holder that is gone: we hold the lease.
    await db
      .update(syncRuns)
      .set({ status: "failed", finishedMs: now, error: "interrupted: the process running this sync stopped before it finished" })
      .where(and(eq(syncRuns.appPk, app.pk), eq(syncRuns.status, "running")));
    const resume = app.backfillCompletedMs === null && options.fromStart !== true ? await findResumePoint(db, app.pk) : null;
    const perPage = resume?.perPage ?? options.perPage ?? 1000;
    const [run] = await db
      .insert(syncRuns)
      .values({
        appPk: app.pk, kind: summary.kind, trigger: options.trigger, status: "running", startedMs: now,
        perPage, startPage: resume?.page ?? 1, resumedFromRun: resume?.fromRun ?? null,
      })
      .returning({ pk: syncRuns.pk });
    return { runPk: run!.pk, resume };
  } catch (err) {
    await releaseSyncLease(db, app.pk, owner).catch(() => undefined);
    throw err;
  }
}

/**
 * Renews the run's lease every quarter lease until stopped; `onLost` is called once if
 * another run has taken it (it ran out: this process stalled or lost its database). A
 * renewal that fails (the database is briefly unreachable) is retried at the next tick;
 * renewals never overlap, so a slow one cannot pile up behind the timer.
 */
export function keepSyncLease(db: Db, appPk: number, owner: string, leaseMs: number, onLost: () => void, log: Logger): { stop(): void } {
  let renewing = false;
  let lost = false;
  const timer = setInterval(() => {
    if (renewing || lost) return;
    renewing = true;
    renewSyncLease(db, appPk, owner, leaseMs)
      .then((ours) => {
        if (ours || lost) return;
        lost = true;
        onLost();
      })
      .catch((err: unknown) => log.warn({ err: errorText(err) }, "lease renewal failed; will retry"))
      .finally(() => {
        renewing = false;
      });
  }, Math.max(50, Math.floor(leaseMs / 4)));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** A running sync's counters and cursor, on its run row: what the next run resumes from. */
export async function saveRunProgress(db: Db, runPk: number, p: SyncProgress): Promise<void> {
  const { syncRuns } = tablesOf(db);
  await db
    .update(syncRuns)
    .set({
      pages: p.pages, fetched: p.fetched, inserted: p.inserted, updated: p.updated, unchanged: p.unchanged, skipped: p.skipped, refreshed: p.refreshed,
      perPage: p.perPage, committedPage: p.committedPage, announcedTotal: p.announcedTotal,
    })
    .where(eq(syncRuns.pk, runPk));
}

/**
 * Progress saved without holding up the sync, one write after the other (a later cursor
 * is never overwritten by an earlier one that took longer on another pooled connection).
 * `settled()` waits for the last: the run's final row must come after every progress write.
 * Progress is advisory — a write that fails is dropped; the final row says how the run ended.
 */
export function runProgressWriter(db: Db): { save(runPk: number, p: SyncProgress): void; settled(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  return {
    save(runPk, p) {
      const snapshot = { ...p };
      last = last.then(() => saveRunProgress(db, runPk, snapshot)).catch(() => undefined);
    },
    settled: () => last,
  };
}

/**
 * The run's final row, then the lease. Either may fail on a warehouse that is full or
 * locked, or a Postgres that is unreachable: the summary still carries the outcome, a row
 * left `running` is closed as interrupted by the next run, and a lease left behind is
 * taken over (at once on SQLite when this process holds no run under it; on Postgres when
 * it runs out).
 */
export async function finishRun(
  db: Db,
  app: AppRow,
  owner: string,
  runPk: number,
  summary: SyncSummary,
  cursor: ReturnType<typeof cursorOf>,
  log: Logger,
): Promise<void> {
  const { syncRuns } = tablesOf(db);
  try {
    await db
      .update(syncRuns)
      .set({
        status: summary.status === "succeeded" ? "succeeded" : "failed",
        finishedMs: Date.now(),
        kind: summary.kind,
        ...progressOf(summary),
        ...cursor,
        error: summary.error,
        skippedRecords: summary.skippedRecords.length ? summary.skippedRecords : null,
      })
      .where(eq(syncRuns.pk, runPk));
  } catch (err) {
    log.error({ err: errorText(err) }, "could not record the end of the sync run");
  }
  try {
    await releaseSyncLease(db, app.pk, owner);
  } catch (err) {
    log.error({ err: errorText(err) }, "could not release the sync lock; the next run takes it over");
  }
}
