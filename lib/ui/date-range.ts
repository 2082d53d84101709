/**
 * Date-range presets and custom dates in the dashboard's time zone, as the API's
 * `from` (inclusive) / `to` (exclusive) epoch seconds. Pure: `now` is a parameter.
 */
import { offsetAt } from "@/lib/analytics/tz";

export const PRESETS = [
  { key: "7d", label: "Last 7 days" },
  { key: "30d", label: "Last 30 days" },
  { key: "90d", label: "Last 90 days" },
  { key: "month", label: "This month" },
  // A month back from today (rolling: Oct 25 – Nov 24), then the whole calendar month before this one.
  { key: "lastMonth", label: "Last month" },
  { key: "prevMonth", label: "Previous month" },
] as const;
export type PresetKey = (typeof PRESETS)[number]["key"];

export interface Range {
  from: number;
  to: number;
}

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

export function presetRange(key: PresetKey, now: number, tz: string): Range {
  const today = localDate(now, tz);
  const tomorrow = localMidnight(today.y, today.m, today.d + 1, tz);
  switch (key) {
    case "7d":
      return { from: localMidnight(today.y, today.m, today.d - 6, tz), to: tomorrow };
    case "30d":
      return { from: localMidnight(today.y, today.m, today.d - 29, tz), to: tomorrow };
    case "90d":
      return { from: localMidnight(today.y, today.m, today.d - 89, tz), to: tomorrow };
    case "month":
      return { from: localMidnight(today.y, today.m, 1, tz), to: localMidnight(today.y, today.m + 1, 1, tz) };
    case "lastMonth": {
      // The day after today's date a month ago (clamped to that month's end: Mar 31 → Mar 1), through today.
      const daysBefore = new Date(Date.UTC(today.y, today.m - 1, 0)).getUTCDate();
      return { from: localMidnight(today.y, today.m - 1, Math.min(today.d, daysBefore) + 1, tz), to: tomorrow };
    }
    case "prevMonth":
      return { from: localMidnight(today.y, today.m - 1, 1, tz), to: localMidnight(today.y, today.m, 1, tz) };
  }
}

/** Which preset (if any) a range is, evaluated at `now`. */
export function matchPreset(range: { from: number | null; to: number | null }, now: number, tz: string): PresetKey | "all" | "custom" {
  if (range.from === null && range.to === null) return "all";
  for (const p of PRESETS) {
    const r = presetRange(p.key, now, tz);
    if (r.from === range.from && r.to === range.to) return p.key;
  }
  return "custom";
}

const pad = (n: number) => String(n).padStart(2, "0");

/** `<input type="date">` value of a `from` bound. */
export function toDateInput(t: number | null, tz: string): string {
  if (t === null) return "";
  const { y, m, d } = localDate(t, tz);
  return `${y}-${pad(m)}-${pad(d)}`;
}

/** `<input type="date">` value of a `to` bound (exclusive): the last included day. */
export function toEndDateInput(t: number | null, tz: string): string {
  return t === null ? "" : toDateInput(t - 1, tz);
}

/** A date input's value as the `from` bound (local midnight), or null. */
export function fromDateInput(value: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return m ? localMidnight(Number(m[1]), Number(m[2]), Number(m[3]), tz) : null;
}

/** A date input's value as the `to` bound: the midnight after that day. */
export function endDateInput(value: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return m ? localMidnight(Number(m[1]), Number(m[2]), Number(m[3]) + 1, tz) : null;
}
