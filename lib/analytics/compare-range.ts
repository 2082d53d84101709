/**
 * The period a report's [from, to) is compared with, in the report's time zone.
 *
 * - `previous`: the period just before, as long as this one. A range that starts on the
 *   1st of a month and ends within it (month to date, Nov 1–28) is compared with the same
 *   days of the month before (Oct 1–28), not with the 28 days before Nov 1 (Oct 4–31):
 *   the start of a month is not like its end, so a month is set against a month.
 * - `year`: the same calendar dates one year earlier.
 */
import { localDate, localMidnight, offsetAt } from "@/lib/time/tz";

export const COMPARE_MODES = ["previous", "year"] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

export interface EpochRange {
  from: number;
  to: number;
}

const DAY = 86_400;

/** The local date and the seconds since that date's midnight of instant `t`. */
function localParts(t: number, tz: string) {
  const date = localDate(t, tz);
  return { ...date, sinceMidnight: t - localMidnight(date.y, date.m, date.d, tz) };
}

export function comparisonRange(range: EpochRange, tz: string, mode: CompareMode = "previous"): EpochRange {
  const { from, to } = range;
  if (mode === "year") {
    const shift = (t: number) => {
      const p = localParts(t, tz);
      // Feb 29 has no twin a year earlier: Mar 1 (Date.UTC's overflow) stands in for it.
      return localMidnight(p.y - 1, p.m, p.d, tz) + p.sinceMidnight;
    };
    return { from: Math.max(0, shift(from)), to: Math.max(0, shift(to)) };
  }
  const start = localParts(from, tz);
  const end = localParts(to, tz);
  const nextMonth = localMidnight(start.y, start.m + 1, 1, tz);
  const monthToDate = start.d === 1 && start.sinceMidnight === 0 && end.sinceMidnight === 0 && to > from && to <= nextMonth;
  if (monthToDate) {
    const days = Math.round((to - from + offsetAt(tz, to) - offsetAt(tz, from)) / DAY);
    const previousStart = localMidnight(start.y, start.m - 1, 1, tz);
    // Clamped to the previous month: Mar 1–31 against all of February, not into March.
    return { from: previousStart, to: Math.min(from, localMidnight(start.y, start.m - 1, 1 + days, tz)) };
  }
  return { from: Math.max(0, from - (to - from)), to: from };
}
