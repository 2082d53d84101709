import type { Db } from "@/db/client";
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
 */
export interface RetentionSettings {
  auditDays: number;
  syncRunsDays: number;
  /** ClickHouse mode: the warehouse and its kept months of facts (0: forever). */
  clickHouse?: { config: ClickHouseConfig; keepMonths: number };
}

const DAY_MS = 86_400_000;
const BATCH_ROWS = 2_000;

function inBatches(db: Db, statement: string, cutoffMs: number): number {
  const del = db.$client.prepare<[number, number]>(statement);
  let total = 0;
  for (;;) {
    const { changes } = del.run(cutoffMs, BATCH_ROWS);
    total += changes;
    if (changes < BATCH_ROWS) return total;
  }
}

/** Audit rows older than `days` (0: none). */
export function pruneAudit(db: Db, days: number, nowMs = Date.now()): number {
  if (days <= 0) return 0;
  return inBatches(db, "DELETE FROM audit_log WHERE pk IN (SELECT pk FROM audit_log WHERE at_ms < ? ORDER BY pk LIMIT ?)", nowMs - days * DAY_MS);
}

/**
 * Finished sync runs started more than `days` ago (0: none). Each app's latest run stays
 * whatever its age: the Sync page and a resumed backfill read it.
 */
export function pruneSyncRuns(db: Db, days: number, nowMs = Date.now()): number {
  if (days <= 0) return 0;
  return inBatches(
    db,
    `DELETE FROM sync_runs WHERE pk IN (
       SELECT pk FROM sync_runs WHERE started_ms < ? AND status <> 'running'
         AND pk NOT IN (SELECT max(pk) FROM sync_runs GROUP BY app_pk)
       ORDER BY pk LIMIT ?)`,
    nowMs - days * DAY_MS,
  );
}

export function pruneOnce(db: Db, settings: RetentionSettings, nowMs = Date.now()): { audit: number; syncRuns: number } {
  return { audit: pruneAudit(db, settings.auditDays, nowMs), syncRuns: pruneSyncRuns(db, settings.syncRunsDays, nowMs) };
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
  const run = () => {
    try {
      const pruned = pruneOnce(open(), settings);
      if (pruned.audit + pruned.syncRuns > 0) logger.info(pruned, "retention: pruned old audit rows and sync runs");
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, "retention: prune failed; it is tried again at the next hour");
    }
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
