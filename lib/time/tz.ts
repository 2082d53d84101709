/**
 * Time zones for day and hour buckets. A zone's UTC offset over a range is a list of
 * segments (a new one at each DST change); every IANA offset in use is a multiple of
 * 15 minutes, so a segment's offset turns a 15-minute UTC bucket into a local day or
 * hour exactly.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
    });
    formatters.set(tz, f);
  }
  return f;
}

export function isValidTimeZone(tz: string): boolean {
  if (tz.length === 0 || tz.length > 64) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** Offset of `tz` from UTC at epoch second `t`, in seconds (Asia/Kolkata → 19800). */
export function offsetAt(tz: string, t: number): number {
  if (tz === "UTC" || tz === "Etc/UTC") return 0;
  const parts = formatter(tz).formatToParts(new Date(t * 1000));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second")) / 1000;
  return local - Math.floor(t);
}

export interface OffsetSegment {
  /** First epoch second the offset applies (-Infinity for the first segment). */
  from: number;
  offset: number;
}

const HOUR = 3600;
const DAY = 86_400;

/** Offset segments covering [from, to): daily probes, then a binary search to the
 * exact second of each change. */
export function offsetSegments(tz: string, from: number, to: number): OffsetSegment[] {
  const key = `${tz}|${from}|${to}`;
  const hit = segmentCache.get(key);
  if (hit) return hit;
  const out = computeSegments(tz, from, to);
  if (segmentCache.size >= 256) segmentCache.delete(segmentCache.keys().next().value!);
  segmentCache.set(key, out);
  return out;
}

/** Zone rules do not change while a process runs: the dashboard asks the same ranges again and again. */
const segmentCache = new Map<string, OffsetSegment[]>();

function computeSegments(tz: string, from: number, to: number): OffsetSegment[] {
  const first = offsetAt(tz, from);
  const segments: OffsetSegment[] = [{ from: -Infinity, offset: first }];
  if (tz === "UTC" || tz === "Etc/UTC") return segments;
  let prevT = from;
  let prevOff = first;
  for (let t = from + DAY; ; t += DAY) {
    const probe = Math.min(t, to);
    const off = offsetAt(tz, probe);
    if (off !== prevOff) {
      let lo = prevT;
      let hi = probe; // offset(lo) = prevOff, offset(hi) = off
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (offsetAt(tz, mid) === prevOff) lo = mid;
        else hi = mid;
      }
      segments.push({ from: hi, offset: off });
      prevOff = off;
    }
    prevT = probe;
    if (probe >= to) break;
  }
  return segments;
}

/** SQL: the offset (seconds) at the instant `expr` (epoch seconds), from segments. */
export function offsetSql(segments: OffsetSegment[], expr: string): string {
  if (segments.length === 1) return String(segments[0].offset);
  const whens = segments
    .slice(1)
    .map((s, i) => `WHEN ${expr} < ${s.from} THEN ${segments[i].offset}`)
    .join(" ");
  return `(CASE ${whens} ELSE ${segments[segments.length - 1].offset} END)`;
}

export function offsetFromSegments(segments: OffsetSegment[], t: number): number {
  let off = segments[0].offset;
  for (const s of segments) {
    if (t >= s.from) off = s.offset;
    else break;
  }
  return off;
}

/** Local calendar day number (days since 1970-01-01 in the zone) of epoch second t. */
export function localDayNumber(tz: string, t: number): number {
  return Math.floor((t + offsetAt(tz, t)) / DAY);
}

/** `YYYY-MM-DD` of a day number. */
export function dayNumberToDate(day: number): string {
  return new Date(day * DAY * 1000).toISOString().slice(0, 10);
}

/** First epoch second of the local hour at or after `t`. */
export function nextLocalHourStart(segments: OffsetSegment[], t: number): number {
  const off = offsetFromSegments(segments, t);
  return Math.ceil((t + off) / HOUR) * HOUR - off;
}

export const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;

/** Local calendar date (y, m 1-12, d) of epoch second `t` in `tz`. */
export function localDate(t: number, tz: string): { y: number; m: number; d: number } {
  const local = new Date((t + offsetAt(tz, t)) * 1000);
  return { y: local.getUTCFullYear(), m: local.getUTCMonth() + 1, d: local.getUTCDate() };
}

/** Epoch second of local midnight starting date (y, m, d) in `tz` (DST-aware; day
 * overflow like Date.UTC, so d = 0 is the last day of the previous month). */
export function localMidnight(y: number, m: number, d: number, tz: string): number {
  const wall = Date.UTC(y, m - 1, d) / 1000;
  let t = wall - offsetAt(tz, wall);
  // One correction covers a DST change between the guess and the answer.
  t = wall - offsetAt(tz, t);
  return t;
}
