import { z } from "zod";
import { appsParam, enumParam, formatParam, intParam, optionalIntParam, tzParam } from "./params";
import { localDate, localMidnight } from "@/lib/ui/date-range";

/** `/events`, `GET /api/v1/events` (counts) and `GET /api/v1/events/deliveries`. */
export const OUTCOMES = ["all", "accepted", "rejected", "applied", "stored", "failed"] as const;

export const eventsParamsSchema = z.object({
  app: appsParam,
  /**
   * The period, as the analytics filters name it: `from` (inclusive) / `to` (exclusive)
   * epoch seconds, set by the filter bar. `days` (the last N days in `tz`, today
   * included) is the older way to say it, still answered where no `from`/`to` is given.
   */
  from: optionalIntParam(0, 99_999_999_999),
  to: optionalIntParam(1, 99_999_999_999),
  days: optionalIntParam(1, 366),
  tz: tzParam,
  outcome: enumParam(OUTCOMES, "all"),
  limit: intParam(1, 500, 50),
  /** Page of the per-day table (the page only). */
  page: intParam(1, 100_000, 1),
  format: formatParam,
});
export type EventsParams = z.infer<typeof eventsParamsSchema>;

/** The most days the chart draws (an all-time period over years keeps its table, the chart its last year). */
export const MAX_CHART_DAYS = 366;

const pad = (n: number) => String(n).padStart(2, "0");
const dayOf = (t: number, tz: string) => {
  const { y, m, d } = localDate(t, tz);
  return `${y}-${pad(m)}-${pad(d)}`;
};

/** The local days (in `tz`) from the day of `from` through the day of `lastSecond`. */
export function daysBetween(from: number, lastSecond: number, tz: string): string[] {
  const out: string[] = [];
  const start = localDate(from, tz);
  for (let i = 0; ; i++) {
    const t = localMidnight(start.y, start.m, start.d + i, tz);
    if (t > lastSecond) break;
    out.push(dayOf(t, tz));
  }
  return out;
}

/** The last `days` days in `tz` as the filter bar's presets write them: local midnight `days - 1` days ago to the next midnight. */
export function daysWindow(days: number, tz: string, nowMs = Date.now()): { from: number; to: number } {
  const today = localDate(Math.floor(nowMs / 1000), tz);
  return { from: localMidnight(today.y, today.m, today.d - (days - 1), tz), to: localMidnight(today.y, today.m, today.d + 1, tz) };
}

/**
 * The window the events pages count over, in epoch seconds: `from`/`to` as given; else
 * the last `days` days (local midnight `days - 1` days ago through today); else all time
 * (from 0: the chart then starts at the first event's day). `to` never runs past now.
 */
export function eventsWindow(p: Pick<EventsParams, "from" | "to" | "days" | "tz">, nowMs = Date.now()): { from: number; to: number; allTime: boolean } {
  const now = Math.floor(nowMs / 1000) + 1;
  if (p.from !== undefined || p.to !== undefined) return { from: p.from ?? 0, to: Math.min(p.to ?? now, now), allTime: p.from === undefined };
  if (p.days !== undefined) return { ...daysWindow(p.days, p.tz, nowMs), to: now, allTime: false };
  return { from: 0, to: now, allTime: true };
}

/** The chart's days: the window's, starting at the first counted day for an all-time window, at most the last MAX_CHART_DAYS. */
export function chartDays(w: { from: number; to: number; allTime: boolean }, firstDay: string | undefined, tz: string): string[] {
  const last = w.to - 1;
  if (w.allTime && firstDay === undefined) return [dayOf(last, tz)];
  const all = w.allTime ? daysBetween(localMidnightOf(firstDay!, tz), last, tz) : daysBetween(w.from, last, tz);
  return all.slice(-MAX_CHART_DAYS);
}

function localMidnightOf(day: string, tz: string): number {
  const [y, m, d] = day.split("-").map(Number);
  return localMidnight(y, m, d, tz);
}
