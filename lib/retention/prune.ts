import { and, asc, inArray, lt, max, ne, notInArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import type { ClickHouseConfig } from "@/lib/clickhouse/config";
import { describePrune, pruneFacts } from "@/lib/clickhouse/fact-retention";
import { logger } from "@/lib/log/logger";

/**
 * Retention of the warehouse's own records (issue 27 item 10): the audit log and the sync
 * runs are pruned past their kept days (RETAIN_AUDIT_DAYS, RETAIN_SYNC_RUNS_DAYS; 0 keeps
 * them forever). The raw webhook deliveries have theirs in the ingest
 * (RETAIN_DELIVERIES_DAYS, lib/ingest/store.ts). Rows go in small batches, each its own
 * short transaction, so that a first prune of years of rows never holds the write lock
 * long enough to make a webhook wait. In ClickHouse mode the call facts have theirs too
 * (RETAIN_CALLS_MONTHS, lib/clickhouse/fact-retention.ts), pruned on the same schedule.
 * The deletes are written once for SQLite and Postgres (decision 0042); with several
 * servers over one Postgres each prunes on its schedule, and a batch another server
 * already deleted simply finds fewer rows.
 */
export interface RetentionSettings {
  auditDays: number;
  syncRunsDays: number;
  /** ClickHouse mode: the warehouse and its kept months of facts (0: forever). */
  clickHouse?: { config: ClickHouseConfig; keepMonths: number };
}

const DAY_MS = 86_400_000;
const BATCH_ROWS = 2_000;

/** Runs `deleteBatch` (which deletes at most BATCH_ROWS rows and returns them) until a batch comes back short. */
async function inBatches(deleteBatch: () => Promise<unknown[]>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = (await deleteBatch()).length;
    total += deleted;
    if (deleted < BATCH_ROWS) return total;
  }
}

/** Audit rows older than `days` (0: none). */
export async function pruneAudit(db: Db, days: number, nowMs = Date.now()): Promise<number> {
  if (days <= 0) return 0;
  const { auditLog } = tablesOf(db);
  const cutoff = nowMs - days * DAY_MS;
  return inBatches(() =>
    db
      .delete(auditLog)
      .where(inArray(auditLog.pk, db.select({ pk: auditLog.pk }).from(auditLog).where(lt(auditLog.atMs, cutoff)).orderBy(asc(auditLog.pk)).limit(BATCH_ROWS)))
      .returning({ pk: auditLog.pk }),
  );
}

/**
 * Finished sync runs started more than `days` ago (0: none). Each app's latest run stays
 * whatever its age: the Sync page and a resumed backfill read it.
 */
export async function pruneSyncRuns(db: Db, days: number, nowMs = Date.now()): Promise<number> {
  if (days <= 0) return 0;
  const { syncRuns } = tablesOf(db);
  const cutoff = nowMs - days * DAY_MS;
  const latest = db.select({ pk: max(syncRuns.pk) }).from(syncRuns).groupBy(syncRuns.appPk);
  return inBatches(() =>
    db
      .delete(syncRuns)
      .where(
        inArray(
          syncRuns.pk,
          db
            .select({ pk: syncRuns.pk })
            .from(syncRuns)
            .where(and(lt(syncRuns.startedMs, cutoff), ne(syncRuns.status, "running"), notInArray(syncRuns.pk, latest)))
            .orderBy(asc(syncRuns.pk))
            .limit(BATCH_ROWS),
        ),
      )
      .returning({ pk: syncRuns.pk }),
  );
}

export async function pruneOnce(db: Db, settings: RetentionSettings, nowMs = Date.now()): Promise<{ audit: number; syncRuns: number }> {
  return { audit: await pruneAudit(db, settings.auditDays, nowMs), syncRuns: await pruneSyncRuns(db, settings.syncRunsDays, nowMs) };
}

/** In the server: a prune a minute after start, then hourly. Returns a stop function. */
export function startRetentionSchedule(open: () => Db, settings: RetentionSettings, everyMs = 3_600_000): () => void {
  const facts = settings.clickHouse && settings.clickHouse.keepMonths > 0 ? settings.clickHouse : undefined;
  if (settings.auditDays <= 0 && settings.syncRunsDays <= 0 && !facts) return () => {};
  let factsRunning = false;
  const pruneClickHouse = async (c: NonNullable<typeof facts>) => {
    // One prune of the facts at a time: a slow one (a mutation on a large call_raw) is not started again beside itself.
    if (factsRunning) return;
    factsRunning = true;
    try {
      const report = await pruneFacts(c.config, c.keepMonths);
      if (report.dropped.length + report.callRawDeleted > 0) logger.info({ ...report, dropped: report.dropped.length }, `retention: ClickHouse facts ${describePrune(report)}`);
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, "retention: ClickHouse prune failed; it is tried again at the next hour");
    } finally {
      factsRunning = false;
    }
  };
  let stateRunning = false;
  const pruneState = async () => {
    if (stateRunning) return;
    stateRunning = true;
    try {
      const pruned = await pruneOnce(open(), settings);
      if (pruned.audit + pruned.syncRuns > 0) logger.info(pruned, "retention: pruned old audit rows and sync runs");
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, "retention: prune failed; it is tried again at the next hour");
    } finally {
      stateRunning = false;
    }
  };
  const run = () => {
    void pruneState();
    if (facts) void pruneClickHouse(facts);
  };
  const first = setTimeout(run, Math.min(60_000, everyMs));
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
