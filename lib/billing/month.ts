/**
 * A calendar month in an IANA time zone as the analytics filter's `[from, to)` epoch
 * seconds: from the first instant of the 1st, local time, to the first instant of the
 * next month's 1st. Offsets come from lib/time/tz.ts; +05:45 (Asia/Kathmandu),
 * DST months (one hour shorter or longer) and zones whose clocks skip local midnight
 * on the 1st (America/Asuncion, 2023-10-01) come out right.
 */
import { isValidTimeZone, offsetAt } from "@/lib/time/tz";

export const MONTH_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;

export interface MonthRange {
  month: string;
  tz: string;
  /** First epoch second of the month, inclusive. */
  from: number;
  /** First epoch second of the next month, exclusive. */
  to: number;
}

export function isMonth(text: string): boolean {
  const m = MONTH_PATTERN.exec(text);
  return m !== null && Number(m[1]) >= 1970 && Number(m[1]) <= 9998;
}

/** "2026-03" → "2026-04" (by `delta` months). */
export function addMonths(month: string, delta: number): string {
  const [y, m] = month.split("-").map(Number);
  const index = y * 12 + (m - 1) + delta;
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}

/** The month (in `tz`) holding epoch second `t`. */
export function monthOf(t: number, tz: string): string {
  const local = new Date((t + offsetAt(tz, t)) * 1000);
  return `${local.getUTCFullYear()}-${String(local.getUTCMonth() + 1).padStart(2, "0")}`;
}

/**
 * First instant whose local wall clock in `tz` reads at or after `wall` (wall-clock
 * seconds written as if UTC). Usually `wall - offset`; when the clock skips over `wall`
 * (a DST gap), the instant the clock jumps; when it reads `wall` twice, the first.
 */
export function firstInstantAtOrAfter(tz: string, wall: number): number {
  // The instants reading exactly `wall` under the offsets in force a day before, at and
  // after it; the earliest is the answer (clocks that go back read `wall` twice).
  const exact = [wall - 86_400, wall, wall + 86_400]
    .map((probe) => wall - offsetAt(tz, probe))
    .filter((t) => t + offsetAt(tz, t) === wall);
  if (exact.length > 0) return Math.min(...exact);
  // A gap: the first instant whose wall clock has passed `wall`. Offsets stay within
  // ±18 h, so two days either side bracket it.
  let lo = wall - 2 * 86_400;
  let hi = wall + 2 * 86_400;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + offsetAt(tz, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The `[from, to)` epoch seconds of `month` ("YYYY-MM") in `tz`. Throws on a bad month or zone. */
export function monthRange(month: string, tz: string): MonthRange {
  if (!isMonth(month)) throw new RangeError(`"${month}" is not a month (YYYY-MM)`);
  if (!isValidTimeZone(tz)) throw new RangeError(`"${tz}" is not an IANA time zone`);
  const [y, m] = month.split("-").map(Number);
  return { month, tz, from: firstInstantAtOrAfter(tz, Date.UTC(y, m - 1, 1) / 1000), to: firstInstantAtOrAfter(tz, Date.UTC(y, m, 1) / 1000) };
}

/** True once the whole month is in the past at `now` (epoch seconds). */
export function isMonthOver(month: string, tz: string, now: number): boolean {
  return now >= monthRange(month, tz).to;
}

/** The last month (in `tz`) that is over: the statements page's default. */
export function lastWholeMonth(tz: string, now = Math.floor(Date.now() / 1000)): string {
  return addMonths(monthOf(now, tz), -1);
}
