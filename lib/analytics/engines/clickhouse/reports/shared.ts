import { array, join, raw, sql, type Sql } from "@/lib/clickhouse";
import { SESSION_CODE_SQL } from "@/lib/clickhouse/schema-v2";

/** Minutes from the integer thousandths ClickHouse holds and sums exactly (the in-memory engine's round3 of the same sum). */
export const minutes = (x1000: number): number => x1000 / 1000;

/**
 * What breaks ties after a sort key in every list of calls (`dir`: the key's direction):
 * arrival (`calls_v2.arrival`, as the in-memory engine's SQLite pk), then the call's key for
 * rows stored before arrival was kept (decision 0014 §10).
 */
export const ARRIVAL_ORDER = (dir: "ASC" | "DESC"): string => `arrival ${dir}, app_pk ${dir}, session_id ${dir}`;

/**
 * Rows of calls_v2 by (app, start second): `(app_pk = a AND start_at = toDateTime(s)) OR …`,
 * each term a few granules of the key's index (one per part of the month). 18.16 prunes
 * by each pair this way, not by an IN of tuples nor by an app IN (…) beside the starts
 * (which reads every app's granules of every start).
 */
export function atKeys(keys: ReadonlyArray<{ appPk: number; startAt: number }>): Sql {
  const pairs = [...new Set(keys.map((k) => `${k.appPk}:${k.startAt}`))].map((k) => k.split(":").map(Number));
  if (pairs.length <= MAX_OR_PAIRS) return join(pairs.map(([app, start]) => sql`(app_pk = ${app} AND start_at = toDateTime(${start}))`), " OR ");
  // A long OR chain makes 18.16's index analysis take longer than the read it saves (a
  // 1,000-row page: over 30 s on a test warehouse): per app, its starts as one set.
  const startsByApp = new Map<number, number[]>();
  for (const [app, start] of pairs) startsByApp.set(app, [...(startsByApp.get(app) ?? []), start]);
  return join([...startsByApp].map(([app, starts]) => sql`(app_pk = ${app} AND start_at IN (${join(starts.map((s) => sql`toDateTime(${s})`), ", ")}))`), " OR ");
}

/** Pairs up to which atKeys writes one OR term each (a page of 50, a widened one). */
const MAX_OR_PAIRS = 100;

/**
 * The rows whose session code (calls_v2.session_code, participants_v2's too) is one of
 * these sessions': a PREWHERE, so that of the granules the key's index leaves, only those
 * holding such a row are read whole (one 8-byte column decides; a hash collision only reads more).
 */
export function sessionCodeIn(sessionIds: readonly string[]): Sql {
  return sql`session_code IN (SELECT ${raw(SESSION_CODE_SQL(sql`arrayJoin(${array([...new Set(sessionIds)])})`.text))})`;
}
