import { sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { runningHoursOf, runningHoursSql, SQLITE_DIALECT } from "../../../running-hours";

/**
 * The filter model compiled to SQL over raw `calls` rows (alias `c`), for what the
 * memory engine still filters in SQLite: recordings (the calls list and its CSV filter
 * and sort in the store, then read rows by pk: calls.ts). Aggregates compile the same
 * model against the in-memory store (scan/; docs/decisions/0006-analytics-rollups.md).
 */

export function appCondition(column: string, appPks: number[] | "all"): SQL | undefined {
  if (appPks === "all") return undefined;
  if (appPks.length === 0) return sql`0`;
  return sql`${sql.raw(column)} IN (${sql.join(appPks.map((p) => sql`${p}`), sql`, `)})`;
}

export function and(conds: Array<SQL | undefined>): SQL {
  const list = conds.filter((c): c is SQL => c !== undefined);
  return list.length === 0 ? sql`1` : sql.join(list.map((c) => sql`(${c})`), sql` AND `);
}

/** Conditions of the categorical filters on raw `calls` columns (alias `c`). */
function rawDimConditions(f: Filters): SQL[] {
  const out: SQL[] = [];
  if (f.type) out.push(sql`c.type = ${f.type}`);
  if (f.mode) out.push(sql`c.mode = ${f.mode}`);
  if (f.status) out.push(sql`c.status = ${f.status}`);
  if (f.receiverType) out.push(sql`c.receiver_type = ${f.receiverType}`);
  if (f.hasRecording !== undefined) out.push(sql`c.has_recording = ${f.hasRecording ? 1 : 0}`);
  if (f.participantsCount !== undefined) out.push(sql`c.total_participants = ${f.participantsCount}`);
  return out;
}

/**
 * Every filter but time on raw `calls` rows (alias `c`). A weekday/hour filter's hours
 * are bounded by `f`'s from/to: a report whose period is on another time (recordings,
 * client sessions) passes them undefined, as the ClickHouse engine does.
 */
export function rawConditions(f: Filters, appPks: number[] | "all"): SQL[] {
  const out = [appCondition("c.app_pk", appPks), ...rawDimConditions(f)].filter((c): c is SQL => c !== undefined);
  if (f.uid !== undefined) {
    // Per call row, through the (call_pk, seq) key of participants: only recordings use
    // these conditions, one call per recording (no (app_pk, uid) index needed). Same
    // meaning as the store's uid filter: the call lists the uid.
    out.push(sql`EXISTS (SELECT 1 FROM call_participants p WHERE p.call_pk = c.pk AND p.uid = ${f.uid})`);
  }
  const hours = runningHoursOf(f);
  // Numbers computed from the parsed filter only (no user text): raw SQL is safe.
  if (hours !== undefined) out.push(sql.raw(runningHoursSql(hours, "c.start_at", "c.ended_at", SQLITE_DIALECT)));
  return out;
}

export function timeCondition(from: number | undefined, to: number | undefined, column = "c.start_at"): SQL | undefined {
  const col = sql.raw(column);
  if (from !== undefined && to !== undefined) return sql`${col} >= ${from} AND ${col} < ${to}`;
  if (from !== undefined) return sql`${col} >= ${from}`;
  if (to !== undefined) return sql`${col} < ${to}`;
  return undefined;
}

const dialect = new SQLiteSyncDialect();

/** Rows of a query, streamed (better-sqlite3 `.iterate()`): constant memory. */
export function iterateRows<T>(db: Db, query: SQL, raw = false): IterableIterator<T> {
  const q = dialect.sqlToQuery(query);
  const stmt = db.$client.prepare(q.sql);
  return (raw ? stmt.raw() : stmt).iterate(...(q.params as unknown[])) as IterableIterator<T>;
}

export function explain(db: Db, query: SQL): string[] {
  const q = dialect.sqlToQuery(query);
  return (db.$client.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as unknown[])) as Array<{ detail: string }>).map((r) => r.detail);
}
