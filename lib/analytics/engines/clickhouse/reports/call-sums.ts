import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { hasRunningHours } from "@/lib/analytics/running-hours";
import type { Tables } from "../context";
import { callConditions } from "../conditions";

/**
 * Sums of the matching calls per combination of the pre-aggregates' dimensions, read from
 * `calls_by_month` for the whole months of the range, from `calls_by_bucket` for the whole
 * 15-minute buckets outside them, and from the signed rows for the rest, under a quarter
 * hour at each edge (docs/decisions/0034-clickhouse-schema-v2.md, "A stored link flag;
 * reports read the pre-aggregates (session 16)" and "Totals from three layers (session 18)").
 * What the totals, breakdowns, apps and recording summary sum.
 *
 * A subquery with one row per (source, combination) and the columns:
 * the dimensions as calls_v2 names them (app_pk, the closed sets and their `_other`,
 * platform_has_recording, has_link, total_participants), `before` (1 in the piece before
 * `splitAt`), and the signed sums `c` (calls), `ax`, `vx` (audio, video minutes × 1000),
 * `ds` (duration seconds; `before` is materialized: 18.16 refuses a constant column in one part
 * of a UNION ALL and not in another). Sum them, and leave out groups whose `c` sums to 0, as the signed rows.
 *
 * Exact in any zone: a month is read from the pre-aggregate only when it lies whole in the
 * range, and the month bounds are computed by ClickHouse with the same `toStartOfMonth` the
 * view used, on each shard (the server's time zone); every other matching row is read from
 * the signed rows, bounded by the key to the range's partial first and last months. A range
 * of whole months, or all time, reads hundreds of pre-aggregate rows plus its two edges.
 * Filters the pre-aggregate cannot answer (uid, weekday/hour) read the signed rows alone.
 */

/** The dimension columns, as both sources hold them. */
const DIMENSIONS = "app_pk, type, type_other, mode, mode_other, status, status_other, receiver_type, receiver_type_other, platform_has_recording, has_link, total_participants";

/**
 * Every part sums per combination where it reads: on a cluster each shard then sends its
 * combinations (hundreds) to the initiator rather than its rows (docs/decisions/0034,
 * "Totals from three layers (session 18)": shipping the rows was most of a 60-day total's time).
 */
const GROUPED = `GROUP BY ${DIMENSIONS}, before`;
const SIGNED_SUMS = "sum(toInt64(sign)) AS c, sum(toInt64(sign) * total_audio_minutes_x1000) AS ax, sum(toInt64(sign) * total_video_minutes_x1000) AS vx, sum(toInt64(sign) * duration_seconds) AS ds";
const PRE_SUMS = "sum(calls) AS c, sum(total_audio_minutes_x1000) AS ax, sum(total_video_minutes_x1000) AS vx, sum(duration_seconds) AS ds";

/** The largest second a DateTime holds (a bound past it reads the signed rows). */
const MAX_DATETIME = 4_294_967_295;

/** Whether [from, to) fits a DateTime (a bound past it reads the signed rows). */
export function rangeFitsDateTime(f: Pick<Filters, "from" | "to">): boolean {
  const fits = (x: number | undefined) => x === undefined || (Number.isInteger(x) && x >= 0 && x <= MAX_DATETIME);
  return fits(f.from) && fits(f.to);
}

/** Whether the pre-aggregate answers `f`'s filters (every one a dimension of it) and its range fits a DateTime. */
export function preAggregated(f: Filters): boolean {
  return f.uid === undefined && !hasRunningHours(f) && rangeFitsDateTime(f);
}

/** The first UTC month start at or after `s` (epoch seconds). */
function utcMonthAtOrAfter(s: number): number {
  const d = new Date(s * 1000);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  return start === s ? s : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

/** A day: more than any zone's distance from UTC (14 hours), so a zone's month starts within it of UTC's. */
const EDGE_MARGIN = 86_400;

/**
 * Whether [from, to) may hold a whole month of the server's zone: some UTC month lies in it
 * widened by EDGE_MARGIN on each side. When not (the last 30 days, a week), the signed rows
 * alone answer, without the month bounds.
 */
export function mayHoldWholeMonth(from: number | undefined, to: number | undefined): boolean {
  if (from === undefined || to === undefined) return true;
  const first = utcMonthAtOrAfter(Math.max(0, from - EDGE_MARGIN));
  const d = new Date(first * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000 <= to + EDGE_MARGIN;
}

/**
 * The whole months of [from, to) in the server's zone, as constant SQL the server folds
 * once (on each shard: its zone, as its view's `toStartOfMonth`): `first`, the first month
 * starting at or after `from`, and `end`, the start of the month holding `to` (the months
 * [first, end) are whole; none when first ≥ end). Absent bound: unbounded on that side.
 */
export function wholeMonths(from: number | undefined, to: number | undefined): { first?: string; end?: string } {
  return {
    first: from === undefined ? undefined : `addMonths(toStartOfMonth(toDateTime(${Math.max(0, from - 1)})), 1)`,
    end: to === undefined ? undefined : `toStartOfMonth(toDateTime(${to}))`,
  };
}

/** The latest `from` whose next bucket start a DateTime still holds (its largest second is 2^32 − 1). */
const LAST_WHOLE_BUCKET_FROM = MAX_DATETIME - 1800;

/**
 * The whole 15-minute buckets of [from, to), as constant SQL the server folds once with the
 * views' own `toStartOfFifteenMinutes`: `first`, the first bucket starting at or after
 * `from`, and `end`, the start of the bucket holding `to` ([first, end) are whole; none when
 * first ≥ end). Absent bound: unbounded on that side. `undefined` for a `from` in the last
 * bucket a DateTime holds (its next bucket would wrap past 2106: the signed rows answer it).
 */
export function wholeBuckets(from: number | undefined, to: number | undefined): { first?: string; end?: string } | undefined {
  if (from !== undefined && from > LAST_WHOLE_BUCKET_FROM) return undefined;
  return {
    first: from === undefined ? undefined : `toStartOfFifteenMinutes(toDateTime(${Math.max(0, from - 1)})) + 900`,
    end: to === undefined ? undefined : `toStartOfFifteenMinutes(toDateTime(${to}))`,
  };
}

/** `column` outside [first, end) (with first ≥ end: every value), or undefined when unbounded on both sides. */
function outsideOf(column: string, first: string | undefined, end: string | undefined): string | undefined {
  const sides = [first && `${column} < ${first}`, end && `${column} >= ${end}`].filter((x): x is string => !!x);
  return sides.length === 0 ? undefined : `(${sides.join(" OR ")})`;
}

/**
 * One piece [from, to) of the range, in three layers (docs/decisions/0034, "Totals from three
 * layers (session 18)"): its whole months from calls_by_month, the whole 15-minute buckets
 * outside them from calls_by_bucket, and only the rows outside the whole buckets (under 15
 * minutes at each edge) from the signed rows. A server-zone month starts at local midnight,
 * a multiple of 900 s for every offset in use, so a bucket lies wholly in or out of a month.
 */
function pieceSql(t: Tables, f: Filters, pks: readonly number[], from: number | undefined, to: number | undefined, before: 0 | 1): Sql {
  const piece: Filters = { ...f, from, to };
  const tag = `materialize(toUInt8(${before})) AS before`;
  const rowsSelect = sql`SELECT ${raw(DIMENSIONS)}, ${raw(tag)}, ${raw(SIGNED_SUMS)} FROM ${t.calls}`;
  const untimed = callConditions(t, piece, pks, { ignoreTime: true });
  // Months only when the piece may hold one whole (not the last 30 days, a week): no month bounds to fold otherwise.
  const m = mayHoldWholeMonth(from, to) ? wholeMonths(from, to) : undefined;
  const months = m && sql`SELECT ${raw(DIMENSIONS)}, ${raw(tag)}, ${raw(PRE_SUMS)} FROM ${t.callsByMonth}
      WHERE ${and([...untimed, ...[m.first && `month >= ${m.first}`, m.end && `month < ${m.end}`].filter((x): x is string => !!x).map((x) => raw(x))])} ${raw(GROUPED)}`;
  if (m && months && m.first === undefined && m.end === undefined) return months; // all time: the monthly pre-aggregate alone
  // Outside the whole months (every value when none are read).
  const outsideMonths = (column: string) => (m ? outsideOf(column, m.first && `toDateTime(${m.first})`, m.end && `toDateTime(${m.end})`) : undefined);
  const parts: Sql[] = months ? [months] : [];
  const b = wholeBuckets(from, to);
  if (b) {
    const inBuckets = [b.first && `bucket >= ${b.first}`, b.end && `bucket < ${b.end}`, outsideMonths("bucket")].filter((x): x is string => !!x).map((x) => raw(x));
    parts.push(sql`SELECT ${raw(DIMENSIONS)}, ${raw(tag)}, ${raw(PRE_SUMS)} FROM ${t.callsByBucket} WHERE ${and([...untimed, ...inBuckets])} ${raw(GROUPED)}`);
  }
  // The rows outside the whole buckets (the whole months lie inside them), or without buckets outside the months.
  const outside = b ? outsideOf("start_at", b.first, b.end) : outsideMonths("start_at");
  parts.push(sql`${rowsSelect} WHERE ${and([...callConditions(t, piece, pks), outside === undefined ? undefined : raw(outside)])} ${raw(GROUPED)}`);
  return parts.reduce((all, p) => sql`${all} UNION ALL ${p}`);
}

/** The subquery of sums (see above) over the matching calls of `pks`; with `splitAt`, the pieces before and from it apart. */
export function callSumsSql(t: Tables, f: Filters, pks: readonly number[], splitAt?: number): Sql {
  if (pks.length === 0) return sql`SELECT ${raw(DIMENSIONS)}, materialize(toUInt8(0)) AS before, toInt64(sign) AS c, toInt64(0) AS ax, toInt64(0) AS vx, toInt64(0) AS ds FROM ${t.calls} WHERE 0`;
  if (!preAggregated(f)) {
    // The signed rows alone, split by start (a weekday/hour filter widens the starts it reads: its from/to bound the hours, not the starts).
    const before = splitAt === undefined ? raw("materialize(toUInt8(0))") : sql`toUInt8(start_at < toDateTime(${splitAt}))`;
    return sql`SELECT ${raw(DIMENSIONS)}, ${before} AS before, ${raw(SIGNED_SUMS)} FROM ${t.calls} WHERE ${and(callConditions(t, f, pks))} ${raw(GROUPED)}`;
  }
  if (splitAt === undefined) return pieceSql(t, f, pks, f.from, f.to, 0);
  return sql`${pieceSql(t, f, pks, f.from, splitAt, 1)} UNION ALL ${pieceSql(t, f, pks, splitAt, f.to, 0)}`;
}
