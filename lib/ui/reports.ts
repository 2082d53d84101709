/**
 * The analytics routes the dashboard reads, by the name lib/analytics/reports.ts gives
 * them, and the react-query key of one report with one query. Client-safe.
 */
export const REPORT_PATHS = {
  calls: "calls",
  participants: "usage/participants",
  "participants-combined": "usage/participants/combined",
  apps: "usage/apps",
  daily: "usage/daily",
  recordings: "recordings",
  breakdowns: "breakdowns",
  durations: "insights/durations",
  heatmap: "insights/heatmap",
  engagement: "insights/engagement",
  totals: "insights/totals",
  "recording-summary": "recordings/summary",
  "recordings-awaiting": "recordings/awaiting",
  clients: "insights/clients",
} as const;

export type ReportName = keyof typeof REPORT_PATHS;

/** Every filter is in the key: the canonical query string holds them all. */
export function reportKey(name: ReportName, query: URLSearchParams): readonly [string, ReportName, string] {
  return ["report", name, query.toString()] as const;
}

export function reportUrl(name: ReportName, query: URLSearchParams): string {
  const qs = query.toString();
  return `/api/v1/${REPORT_PATHS[name]}${qs ? `?${qs}` : ""}`;
}

/** The CSV of exactly what a table or chart shows: the same route and filters, every
 * row (paging dropped: the CSV is the whole filtered set). */
export function csvUrl(name: ReportName, query: URLSearchParams): string {
  const q = new URLSearchParams(query);
  q.delete("page");
  q.delete("perPage");
  q.set("format", "csv");
  return `/api/v1/${REPORT_PATHS[name]}?${q.toString()}`;
}
