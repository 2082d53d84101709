import { sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { Db } from "@/db/client";
import { notFound } from "@/lib/http/errors";
import { codeOf, dimPartSql, dimsSql, durBucketSql, type DimensionName } from "./dims";
import type { Filters } from "./filters";

/**
 * The filter model compiled to SQL, once, for the two kinds of sources every report
 * reads: raw `calls` rows (alias `c`) and rollup rows keyed by packed `dims`. Reports
 * build on `callFacts` / `participantFacts`, which cut a time range into whole
 * rollup units plus raw edges (see docs/decisions/0006-analytics-rollups.md).
 */

/** Whose apps a query may read: `Caller` satisfies it. */
export interface Scope {
  appPks: "all" | readonly number[];
}

export interface AppRef {
  pk: number;
  appId: string;
  name: string;
}

/** Apps the caller may see, by pk. */
export function visibleApps(db: Db, scope: Scope): AppRef[] {
  const rows = db.all<{ pk: number; appId: string; name: string }>(sql`SELECT pk, app_id AS appId, name FROM apps ORDER BY app_id`);
  return scope.appPks === "all" ? rows : rows.filter((r) => (scope.appPks as readonly number[]).includes(r.pk));
}

/**
 * The app pks a query is restricted to: the requested apps (each must exist and be
 * visible, else 404 as if it did not exist), or every app the caller may see.
 */
export function resolveApps(db: Db, f: Pick<Filters, "apps">, scope: Scope): number[] | "all" {
  if (f.apps.length === 0) return scope.appPks === "all" ? "all" : [...scope.appPks];
  const visible = new Map(visibleApps(db, scope).map((a) => [a.appId, a.pk]));
  return f.apps.map((appId) => {
    const pk = visible.get(appId);
    if (pk === undefined) throw notFound(`app "${appId}" not found`);
    return pk;
  });
}

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

/** Every filter but time on raw `calls` rows (alias `c`). */
export function rawConditions(f: Filters, appPks: number[] | "all"): SQL[] {
  const out = [appCondition("c.app_pk", appPks), ...rawDimConditions(f)].filter((c): c is SQL => c !== undefined);
  if (f.uid !== undefined) {
    // Through the (app_pk, uid) index of participants, never a scan of calls.
    const inner = appCondition("p.app_pk", appPks);
    out.push(sql`c.pk IN (SELECT p.call_pk FROM call_participants p WHERE ${inner ? sql`${inner} AND ` : sql``}p.uid = ${f.uid})`);
  }
  return out;
}

export function timeCondition(from: number | undefined, to: number | undefined, column = "c.start_at"): SQL | undefined {
  const col = sql.raw(column);
  if (from !== undefined && to !== undefined) return sql`${col} >= ${from} AND ${col} < ${to}`;
  if (from !== undefined) return sql`${col} >= ${from}`;
  if (to !== undefined) return sql`${col} < ${to}`;
  return undefined;
}

/** Conditions of the categorical filters on a rollup's `dims` (and `pc`) columns. */
export function rollupDimConditions(f: Filters, withPc: boolean): SQL[] {
  const out: SQL[] = [];
  const dim = (name: DimensionName, value: string | undefined) => {
    if (value !== undefined) out.push(sql`${sql.raw(dimPartSql("dims", name))} = ${codeOf(name, value)}`);
  };
  dim("type", f.type);
  dim("mode", f.mode);
  dim("status", f.status);
  dim("receiverType", f.receiverType);
  if (f.hasRecording !== undefined) out.push(sql`${sql.raw(dimPartSql("dims", "hasRecording"))} = ${f.hasRecording ? 1 : 0}`);
  if (withPc && f.participantsCount !== undefined) out.push(sql`pc = ${f.participantsCount}`);
  return out;
}

/** Half-open range of whole units of `size` seconds inside [from, to), and the raw edges. */
export interface UnitSplit {
  /** Unit index range [lo, hi); undefined bound = unbounded. Empty when lo >= hi. */
  lo?: number;
  hi?: number;
  empty: boolean;
  /** Second ranges outside whole units, to read from raw rows. */
  edges: Array<[number | undefined, number | undefined]>;
}

export function splitUnits(from: number | undefined, to: number | undefined, size: number): UnitSplit {
  const lo = from === undefined ? undefined : Math.ceil(from / size);
  const hi = to === undefined ? undefined : Math.floor(to / size);
  if (lo !== undefined && hi !== undefined && lo >= hi) return { lo, hi, empty: true, edges: [[from, to]] };
  const edges: Array<[number | undefined, number | undefined]> = [];
  if (from !== undefined && lo! * size > from) edges.push([from, lo! * size]);
  if (to !== undefined && hi! * size < to) edges.push([hi! * size, to]);
  return { lo, hi, empty: false, edges };
}

function unitRange(column: string, lo: number | undefined, hi: number | undefined): SQL | undefined {
  return timeCondition(lo, hi, column);
}

function edgesCondition(edges: Array<[number | undefined, number | undefined]>): SQL {
  return sql.join(
    edges.map(([a, b]) => sql`(${timeCondition(a, b) ?? sql`1`})`),
    sql` OR `,
  );
}

export interface FactOptions {
  /** Rollup grain: `q15` (15-minute buckets) or `day`. */
  grain: "q15" | "day";
}

/**
 * Call-level facts: one row per rollup cell or raw call, with columns
 * app_pk, unit (bucket or day), dims, pc, dur_bucket, calls, audio, video, total_min,
 * dur_s, parts, crossing. Exact for every filter: the uid filter (which no rollup can
 * serve) reads raw rows only.
 */
export function callFacts(f: Filters, appPks: number[] | "all", opts: FactOptions): SQL {
  const size = opts.grain === "q15" ? 900 : 86_400;
  const rawSelect = (time: SQL | undefined) => sql`SELECT c.app_pk AS app_pk, c.start_at / ${sql.raw(String(size))} AS unit,
      ${sql.raw(dimsSql("c"))} AS dims, c.total_participants AS pc, ${sql.raw(durBucketSql("c"))} AS dur_bucket, 1 AS calls,
      c.total_audio_minutes AS audio, c.total_video_minutes AS video, c.total_duration_minutes AS total_min,
      c.duration_seconds AS dur_s, c.total_participants AS parts, 0 AS crossing
    FROM calls c WHERE ${and([...rawConditions(f, appPks), time])}`;
  if (f.uid !== undefined) return rawSelect(timeCondition(f.from, f.to));
  const split = splitUnits(f.from, f.to, size);
  const parts: SQL[] = [];
  if (!split.empty) {
    const where = and([appCondition("app_pk", appPks), unitRange(opts.grain === "q15" ? "bucket" : "day", split.lo, split.hi), ...rollupDimConditions(f, true)]);
    parts.push(
      opts.grain === "q15"
        ? sql`SELECT app_pk, bucket AS unit, dims, pc, NULL AS dur_bucket, calls, audio, video, total_min, dur_s, parts, crossing FROM analytics_call_q15 WHERE ${where}`
        : sql`SELECT app_pk, day AS unit, dims, pc, dur_bucket, calls, audio, video, total_min, dur_s, parts, 0 AS crossing FROM analytics_call_day WHERE ${where}`,
    );
  }
  if (split.edges.length > 0) parts.push(rawSelect(edgesCondition(split.edges)));
  return sql.join(parts, sql` UNION ALL `);
}

const MONTH_SECONDS_MIN = 28 * 86_400;

function monthKeyOfDay(day: number): number {
  const d = new Date(day * 86_400_000);
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
}
function firstDayOfMonthKey(key: number): number {
  return Date.UTC(Math.floor(key / 100), (key % 100) - 1, 1) / 86_400_000;
}
function nextMonthKey(key: number): number {
  const y = Math.floor(key / 100);
  const m = key % 100;
  return m === 12 ? (y + 1) * 100 + 1 : key + 1;
}

/**
 * Participant facts: one row per (app, uid) contribution with columns app_pk, uid,
 * listed, joined, unanswered, audio, video, total_min, first_start, last_start. Whole
 * months from the month rollup, other whole days from the day rollup, the rest raw.
 * The uid and participantsCount filters read raw rows only.
 */
export function participantFacts(f: Filters, appPks: number[] | "all"): SQL {
  const rawSelect = (time: SQL | undefined) => sql`SELECT c.app_pk AS app_pk, p.uid AS uid, 1 AS listed, max(p.is_joined <> 0) AS joined,
      max(p.state = 'unanswered') AS unanswered, sum(p.total_audio_minutes) AS audio, sum(p.total_video_minutes) AS video,
      sum(p.total_duration_minutes) AS total_min, c.start_at AS first_start, c.start_at AS last_start
    FROM calls c JOIN call_participants p ON p.call_pk = c.pk
    WHERE ${and([...rawConditions(f, appPks), time])} GROUP BY c.pk, p.uid`;
  if (f.uid !== undefined || f.participantsCount !== undefined) return rawSelect(timeCondition(f.from, f.to));
  const cols = sql`app_pk, uid, listed, joined, unanswered, audio, video, total_min, first_start, last_start`;
  const dimConds = rollupDimConditions(f, false);
  const days = splitUnits(f.from, f.to, 86_400);
  const parts: SQL[] = [];
  if (!days.empty) {
    // Whole months inside the day range.
    let mLo: number | undefined;
    let mHi: number | undefined; // exclusive month keys
    if (days.lo !== undefined) {
      const k = monthKeyOfDay(days.lo);
      mLo = firstDayOfMonthKey(k) === days.lo ? k : nextMonthKey(k);
    }
    if (days.hi !== undefined) mHi = monthKeyOfDay(days.hi); // the month holding day hi is not whole (hi exclusive) unless it starts there
    const monthsExist = mLo === undefined || mHi === undefined || mLo < mHi;
    const span = days.lo !== undefined && days.hi !== undefined ? (days.hi - days.lo) * 86_400 : Infinity;
    if (monthsExist && span >= MONTH_SECONDS_MIN) {
      parts.push(
        sql`SELECT ${cols} FROM analytics_participant_month WHERE ${and([appCondition("app_pk", appPks), timeCondition(mLo, mHi, "month"), ...dimConds])}`,
      );
      const dayRanges: Array<[number | undefined, number | undefined]> = [];
      if (mLo !== undefined && days.lo !== undefined && firstDayOfMonthKey(mLo) > days.lo) dayRanges.push([days.lo, firstDayOfMonthKey(mLo)]);
      if (mHi !== undefined && days.hi !== undefined && firstDayOfMonthKey(mHi) < days.hi) dayRanges.push([firstDayOfMonthKey(mHi), days.hi]);
      for (const [a, b] of dayRanges) {
        parts.push(sql`SELECT ${cols} FROM analytics_participant_day WHERE ${and([appCondition("app_pk", appPks), timeCondition(a, b, "day"), ...dimConds])}`);
      }
    } else {
      parts.push(
        sql`SELECT ${cols} FROM analytics_participant_day WHERE ${and([appCondition("app_pk", appPks), timeCondition(days.lo, days.hi, "day"), ...dimConds])}`,
      );
    }
  }
  if (days.edges.length > 0) parts.push(rawSelect(edgesCondition(days.edges)));
  return sql.join(parts, sql` UNION ALL `);
}

const dialect = new SQLiteSyncDialect();

/** Rows of a query, streamed (better-sqlite3 `.iterate()`): constant memory. */
export function iterateRows<T>(db: Db, query: SQL): IterableIterator<T> {
  const q = dialect.sqlToQuery(query);
  return db.$client.prepare(q.sql).iterate(...(q.params as unknown[])) as IterableIterator<T>;
}

export function explain(db: Db, query: SQL): string[] {
  const q = dialect.sqlToQuery(query);
  return (db.$client.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as unknown[])) as Array<{ detail: string }>).map((r) => r.detail);
}

export const round3 = (x: number): number => Math.round(x * 1000) / 1000;
