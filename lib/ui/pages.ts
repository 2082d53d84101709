/**
 * What a dashboard page's server part and client part must agree on (page sizes, the
 * reports it prefetches): kept out of the "use client" modules so the server can read them.
 */
import type { ReportName } from "./reports";

export const CALLS_PER_PAGE = 50;
export const PARTICIPANTS_PER_PAGE = 50;
export const RECORDINGS_PER_PAGE = 50;

export const OVERVIEW_REPORTS = ["totals", "recording-summary", "daily", "breakdowns", "durations", "heatmap", "engagement", "apps"] as const satisfies readonly ReportName[];

/** Most apps drawn in the per-app trend (one daily series each). */
export const MAX_TREND_APPS = 12;

/** The apps whose trend is drawn: the picked ones, else every visible app. */
export function trendApps(picked: readonly string[], apps: ReadonlyArray<{ appId: string }>): string[] {
  return (picked.length ? [...picked] : apps.map((a) => a.appId)).slice(0, MAX_TREND_APPS);
}

/**
 * Link to one call (its app is part of its identity), keeping the time zone. `list`: the
 * query of the list it was opened from, carried as `back` so that the call's page leads
 * back to the same filtered, sorted page of the list (and its header links keep the filters).
 */
export function callHref(row: { app: string; sessionId: string }, tz: string, list?: URLSearchParams): string {
  const q = new URLSearchParams({ app: row.app });
  if (tz !== "UTC") q.set("tz", tz);
  const back = list?.toString();
  if (back) q.set("back", back);
  return `/calls/${encodeURIComponent(row.sessionId)}?${q.toString()}`;
}
