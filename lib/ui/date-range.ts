/**
 * Date-range presets and custom dates in the dashboard's time zone, as the API's
 * `from` (inclusive) / `to` (exclusive) epoch seconds. Pure: `now` is a parameter.
 */
import { localDate, localMidnight } from "@/lib/time/tz";

export { localDate, localMidnight };

export const PRESETS = [
  { key: "today", label: "Today" },
  { key: "yesterday", label: "Yesterday" },
  { key: "7d", label: "Last 7 days" },
  // The calendar week before this one, Monday to Sunday (ISO weeks).
  { key: "lastWeek", label: "Last week" },
  { key: "30d", label: "Last 30 days" },
  { key: "90d", label: "Last 90 days" },
  // From the 1st through today: the days still to come are neither counted nor drawn.
  { key: "month", label: "Month to date" },
  { key: "prevMonth", label: "Previous month" },
] as const;
export type PresetKey = (typeof PRESETS)[number]["key"];

export interface Range {
  from: number;
  to: number;
}

export function presetRange(key: PresetKey, now: number, tz: string): Range {
  const today = localDate(now, tz);
  const tomorrow = localMidnight(today.y, today.m, today.d + 1, tz);
  switch (key) {
    case "today":
      return { from: localMidnight(today.y, today.m, today.d, tz), to: tomorrow };
    case "yesterday":
      return { from: localMidnight(today.y, today.m, today.d - 1, tz), to: localMidnight(today.y, today.m, today.d, tz) };
    case "lastWeek": {
      // Days since this week's Monday (Date.UTC's weekday of the local date: 0 = Sunday).
      const sinceMonday = (new Date(Date.UTC(today.y, today.m - 1, today.d)).getUTCDay() + 6) % 7;
      return { from: localMidnight(today.y, today.m, today.d - sinceMonday - 7, tz), to: localMidnight(today.y, today.m, today.d - sinceMonday, tz) };
    }
    case "7d":
      return { from: localMidnight(today.y, today.m, today.d - 6, tz), to: tomorrow };
    case "30d":
      return { from: localMidnight(today.y, today.m, today.d - 29, tz), to: tomorrow };
    case "90d":
      return { from: localMidnight(today.y, today.m, today.d - 89, tz), to: tomorrow };
    case "month":
      return { from: localMidnight(today.y, today.m, 1, tz), to: tomorrow };
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

/** Earliest and latest year a typed date may have: the API's epoch seconds start in 1970. */
export const MIN_YEAR = 1970;
export const MAX_YEAR = 2100;

/**
 * Why a date field's value cannot be used, or null when it can. `badInput`: the browser
 * holds a date it cannot complete (a partly typed one), so the value reads as "".
 */
export function dateInputProblem(value: string, badInput: boolean): string | null {
  if (badInput) return "Enter a whole date (month, day and a four-digit year).";
  if (value === "") return null;
  const m = /^(\d{4,6})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return "Enter a date like 2026-11-16.";
  const year = Number(m[1]);
  if (year < MIN_YEAR || year > MAX_YEAR) return `Enter a year from ${MIN_YEAR} to ${MAX_YEAR} (this reads as ${year}).`;
  return null;
}
