import type { Filters } from "./filters";
import { MAX_CROSSINGS } from "./report-types";
import { nextLocalHourStart, offsetFromSegments, offsetSegments, type OffsetSegment } from "@/lib/time/tz";

/**
 * The `weekday` / `hour` filters (the heatmap's drill-down; decision 0041): keep the calls
 * RUNNING during that local weekday and/or hour in `tz`, exactly as the heatmap counts
 * them, so a heatmap cell's count is the number of calls its drill-down lists.
 *
 * The heatmap counts a call in the local hour its start quarter hour falls in, then in
 * every local hour starting up to its last quarter hour (its start quarter while ongoing,
 * at most MAX_CROSSINGS quarters after it): the call covers the instants
 * [a, b) = [start quarter, last quarter + 1) and counts in the cell of each local hour
 * that range meets. With a period, only the hours starting in [from, to) count
 * (`nextLocalHourStart` of each end, as the heatmap): [a, b) is cut to them. So the test
 * is: does [a, b), cut to the period's hours, meet a local hour of the cell? Local hours
 * are numbered from the local epoch (1970-01-01 00:00 was a Thursday); the hours of a
 * cell are every `period`-th one from `first` on, `length` of them in a row (168 / 1 for
 * a weekday and an hour, 168 / 24 for a weekday, 24 / 1 for an hour).
 *
 * A call is cut at the zone change inside it (a DST day: the two pieces each have one
 * offset, so a spring-forward gap is never met and a repeated fall-back hour is); one
 * that runs across two changes (only a zone with a Ramadan break, and a call of weeks)
 * is taken with its two ends' offsets. The heatmap counts a call once per hour it meets,
 * the filter lists it once: a call meeting the same cell twice (a fall-back's repeated
 * hour, a call longer than a week) is one row under a count of two.
 *
 * The same test runs on the in-memory engine's slots (`runsInHours`) and as SQL
 * (`runningHoursSql`, SQLite and ClickHouse), with the same zone segments.
 */
export interface RunningHours {
  period: 24 | 168;
  /** First local hour number (mod `period`) of the cell's run of hours. */
  first: number;
  length: 1 | 24;
  /** The period's hours: [lo, hi) in epoch seconds (hour starts; unbounded ends are ±1e13). */
  lo: number;
  hi: number;
  segments: OffsetSegment[];
}

/** An open period's zone rules are read from this instant (2000-01-01) … */
const OPEN_FROM = 946_684_800;
/** … to the end of the year after this one: calls outside keep the nearest offset. */
function openTo(): number {
  return Date.UTC(new Date().getUTCFullYear() + 2, 0, 1) / 1000;
}
const UNBOUNDED = 1e13;

export function hasRunningHours(f: Pick<Filters, "weekday" | "hour">): boolean {
  return f.weekday !== undefined || f.hour !== undefined;
}

/** The weekday/hour filter of `f` compiled (undefined: none set). */
export function runningHoursOf(f: Filters): RunningHours | undefined {
  if (!hasRunningHours(f)) return undefined;
  const rangeLo = f.from ?? OPEN_FROM;
  const rangeHi = Math.max(f.to ?? openTo(), rangeLo + 1);
  const segments = offsetSegments(f.tz, rangeLo - 86_400, rangeHi + 86_400);
  const lo = f.from === undefined ? -UNBOUNDED : nextLocalHourStart(segments, f.from);
  const hi = f.to === undefined ? UNBOUNDED : nextLocalHourStart(segments, f.to);
  // Local day d (from the local epoch, a Thursday) is weekday (d + 4) mod 7: weekday w is day (w + 3) mod 7.
  const day = f.weekday === undefined ? undefined : (f.weekday + 3) % 7;
  if (day === undefined) return { period: 24, first: f.hour!, length: 1, lo, hi, segments };
  if (f.hour === undefined) return { period: 168, first: day * 24, length: 24, lo, hi, segments };
  return { period: 168, first: day * 24 + f.hour, length: 1, lo, hi, segments };
}

/** Keeps a floor division's operand positive (a multiple of 168 hours). */
const SHIFT_HOURS = 168 * 1_000_000;

/** Whether local hours [ha, hb] hold one of the cell's (ha ≤ hb + 1). */
function meets(h: RunningHours, ha: number, hb: number): boolean {
  // Run k of the cell is hours [first + k·period, … + length): it meets [ha, hb] when it
  // starts at or before hb and ends at or after ha.
  const P = h.period;
  return Math.floor((hb - h.first + SHIFT_HOURS) / P) >= Math.floor((ha - h.first - h.length + P + SHIFT_HOURS) / P);
}

/** First second of the zone segment holding t. */
function segmentStart(segments: OffsetSegment[], t: number): number {
  let from = segments[0].from;
  for (const s of segments) {
    if (t >= s.from) from = s.from;
    else break;
  }
  return from;
}

/** Whether a call starting at `start` (epoch s) and running `span` seconds (0: ongoing) counts in the filter's cell. */
export function runsInHours(h: RunningHours, start: number, span: number): boolean {
  const q0 = Math.floor(start / 900);
  const last = Math.max(q0, Math.min(Math.floor((start + span - 1) / 900), q0 + MAX_CROSSINGS));
  const a = Math.max(q0 * 900, h.lo);
  const b = Math.min((last + 1) * 900, h.hi);
  if (a >= b) return false;
  const o1 = offsetFromSegments(h.segments, a);
  const o2 = offsetFromSegments(h.segments, b - 1);
  const hour = (t: number, o: number) => Math.floor((t + o) / 3600);
  if (o1 === o2) return meets(h, hour(a, o1), hour(b - 1, o1));
  const change = segmentStart(h.segments, b - 1);
  return meets(h, hour(a, o1), hour(change - 1, o1)) || meets(h, hour(change, o2), hour(b - 1, o2));
}

/** The SQL dialect's spelling of what differs between SQLite and ClickHouse. */
export interface SqlDialect {
  greatest(a: string, b: string): string;
  least(a: string, b: string): string;
  /** Floor division of a non-negative integer expression by a positive integer. */
  div(a: string, b: number): string;
  /** The first non-null value. */
  ifNull(a: string, b: string): string;
}

export const SQLITE_DIALECT: SqlDialect = {
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  // CAST: `/` divides integers only when both are (a bound number or a REAL column is not).
  div: (a, b) => `(CAST((${a}) AS INTEGER) / ${b})`,
  ifNull: (a, b) => `ifnull(${a}, ${b})`,
};

export const CLICKHOUSE_DIALECT: SqlDialect = {
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  div: (a, b) => `intDiv(${a}, ${b})`,
  ifNull: (a, b) => `ifNull(${a}, ${b})`,
};

/** `CASE` over the segments: the offset, or the segment's first second, at instant `t`. */
function segmentCase(segments: OffsetSegment[], t: string, pick: (s: OffsetSegment) => number): string {
  if (segments.length === 1) return String(pick(segments[0]) === -Infinity ? -UNBOUNDED : pick(segments[0]));
  const value = (s: OffsetSegment) => String(pick(s) === -Infinity ? -UNBOUNDED : pick(s));
  const whens = segments.slice(1).map((s, i) => `WHEN ${t} < ${s.from} THEN ${value(segments[i])}`).join(" ");
  return `(CASE ${whens} ELSE ${value(segments[segments.length - 1])} END)`;
}

/**
 * `runsInHours` as an SQL condition on a call row: `start` is its start (integer epoch
 * seconds), `end` its end (NULL while ongoing). Values are numbers computed here, never
 * user text.
 */
export function runningHoursSql(h: RunningHours, start: string, end: string, d: SqlDialect): string {
  const q0 = d.div(start, 900);
  const runEnd = d.greatest(d.ifNull(end, start), start);
  const last = d.greatest(q0, d.least(d.div(`${runEnd} - 1 + 900`, 900) + " - 1", `${q0} + ${MAX_CROSSINGS}`));
  const a = d.greatest(`${q0} * 900`, String(h.lo));
  const b = d.least(`(${last} + 1) * 900`, String(h.hi));
  const bLast = `(${b} - 1)`;
  const o1 = segmentCase(h.segments, a, (s) => s.offset);
  const o2 = segmentCase(h.segments, bLast, (s) => s.offset);
  const change = segmentCase(h.segments, bLast, (s) => s.from);
  const hour = (t: string, o: string) => `(${d.div(`${t} + ${o} + ${SHIFT_HOURS * 3600}`, 3600)} - ${SHIFT_HOURS})`;
  const P = h.period;
  const meetsSql = (ha: string, hb: string) =>
    `(${d.div(`${hb} - ${h.first} + ${SHIFT_HOURS}`, P)} >= ${d.div(`${ha} - (${h.first + h.length - P}) + ${SHIFT_HOURS}`, P)})`;
  const whole = meetsSql(hour(a, o1), hour(bLast, o1));
  const split = `(${meetsSql(hour(a, o1), hour(`(${change} - 1)`, o1))} OR ${meetsSql(hour(change, o2), hour(bLast, o2))})`;
  return `(${a} < ${b} AND (CASE WHEN ${o1} = ${o2} THEN ${whole} ELSE ${split} END))`;
}

/**
 * Bounds on the start of the calls the weekday/hour filter can keep within its period
 * (for an index or a partition key): a call counts up to MAX_CROSSINGS quarters after its
 * start quarter, so one starting that long before the period's first hour may still
 * count; none starting at or after its last hour's end does. Without the filter, `f`'s own.
 */
export function startBoundsOf(f: Pick<Filters, "from" | "to"> & Partial<Pick<Filters, "weekday" | "hour" | "tz">>): Pick<Filters, "from" | "to"> {
  if (!hasRunningHours(f) || f.tz === undefined) return { from: f.from, to: f.to };
  const h = runningHoursOf({ ...(f as Filters), tz: f.tz });
  return {
    from: f.from === undefined ? undefined : Math.max(0, h!.lo - (MAX_CROSSINGS + 1) * 900),
    to: f.to === undefined ? undefined : h!.hi,
  };
}
