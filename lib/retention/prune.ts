import { and, asc, inArray, lt, max, ne, notInArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { isPostgresState, tablesOf } from "@/db/state";
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
 * The deletes are written once for SQLite and Postgres (decision 0042).
 *
 * Over Postgres (DATABASE_URL) the webhook inbox is pruned here too, as the SQLite ingest
 * prunes its own (`prunePostgresInbox`): deliveries past RETAIN_DELIVERIES_DAYS that are
 * no longer queued for ClickHouse, and the live state of calls long over. With several
 * servers one prunes at a time: each prune runs under a Postgres advisory lock that the
 * others do not wait for (they skip that hour's turn), held by a session, so a server that
 * dies mid-prune frees it.
 */
export interface RetentionSettings {
  auditDays: number;
  syncRunsDays: number;
  /** Over Postgres: kept days of raw webhook deliveries (RETAIN_DELIVERIES_DAYS; 0 keeps them forever). SQLite's ingest prunes its own. */
  deliveriesDays?: number;
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

/** The advisory lock key of a state prune over Postgres: "cbretain" in its bytes, recognisable in pg_locks. */
export const RETENTION_LOCK_KEY = 0x636272657461696en;

/** Ended calls' live state stays a week ("recently ended"); one silent for 30 days never ended (as lib/ingest/store.ts). */
const LIVE_ENDED_KEEP_MS = 7 * DAY_MS;
const LIVE_SILENT_KEEP_MS = 30 * DAY_MS;

/**
 * The webhook inbox's retention over Postgres: deliveries received more than `days` ago
 * (0: none) that no server still has to forward (not in `delivery_forward_queue`: never a
 * delivery ClickHouse lacks), oldest first in batches; and the live state of calls ended a
 * week ago or silent for 30 days. Their event counts, recordings and participant sessions stay.
 */
export async function prunePostgresInbox(db: Db, days: number, nowMs = Date.now()): Promise<{ deliveries: number; liveSessions: number }> {
  const pool = (db as unknown as PgDb).$client;
  const deliveries =
    days <= 0
      ? 0
      : await inBatches(async () =>
          (
            await pool.query(
              `DELETE FROM webhook_deliveries WHERE pk IN (
                 SELECT d.pk FROM webhook_deliveries d WHERE d.received_ms < $1
                   AND NOT EXISTS (SELECT 1 FROM delivery_forward_queue q WHERE q.delivery_pk = d.pk)
                 ORDER BY d.pk LIMIT $2)
               RETURNING pk`,
              [nowMs - days * DAY_MS, BATCH_ROWS],
            )
          ).rows,
        );
  const live = await pool.query("DELETE FROM live_sessions WHERE (status = 'ended' AND last_event_ms < $1) OR last_event_ms < $2", [
    nowMs - LIVE_ENDED_KEEP_MS,
    nowMs - LIVE_SILENT_KEEP_MS,
  ]);
  return { deliveries, liveSessions: live.rowCount ?? 0 };
}

export interface PruneReport {
  audit: number;
  syncRuns: number;
  /** Over Postgres: webhook deliveries and calls' live state pruned (on SQLite the ingest prunes them: 0 here). */
  deliveries: number;
  liveSessions: number;
  /** Over Postgres: another server was pruning, so this one did nothing. */
  skipped?: true;
}

export async function pruneOnce(db: Db, settings: RetentionSettings, nowMs = Date.now()): Promise<PruneReport> {
  const prune = async (): Promise<PruneReport> => ({
    audit: await pruneAudit(db, settings.auditDays, nowMs),
    syncRuns: await pruneSyncRuns(db, settings.syncRunsDays, nowMs),
    ...(isPostgresState(db) ? await prunePostgresInbox(db, settings.deliveriesDays ?? 0, nowMs) : { deliveries: 0, liveSessions: 0 }),
  });
  if (!isPostgresState(db)) return prune();
  // One server at a time: the lock is the session's, on a connection held for the prune.
  const client = await (db as unknown as PgDb).$client.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [RETENTION_LOCK_KEY.toString()]);
    if (!rows[0]?.locked) return { audit: 0, syncRuns: 0, deliveries: 0, liveSessions: 0, skipped: true };
    try {
      return await prune();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [RETENTION_LOCK_KEY.toString()]);
    }
  } finally {
    client.release();
  }
}

/** In the server: a prune a minute after start, then hourly. Returns a stop function. */
export function startRetentionSchedule(open: () => Db, settings: RetentionSettings, everyMs = 3_600_000): () => void {
  const facts = settings.clickHouse && settings.clickHouse.keepMonths > 0 ? settings.clickHouse : undefined;
  if (settings.auditDays <= 0 && settings.syncRunsDays <= 0 && !facts && !isPostgresState(open())) return () => {};
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
      if (pruned.audit + pruned.syncRuns + pruned.deliveries + pruned.liveSessions > 0) logger.info(pruned, "retention: pruned old audit rows, sync runs and (over Postgres) webhook deliveries and live state");
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
