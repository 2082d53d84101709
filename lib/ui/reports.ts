import { reportRoute, type ReportName } from "@/lib/analytics/report-registry";

export type { ReportJson, ReportName } from "@/lib/analytics/report-registry";

/**
 * The dashboard's URLs of a report (its route from the table of reports,
 * lib/analytics/report-registry.ts) and the react-query key of one report with one
 * query. Client-safe.
 */

/** Every filter is in the key: the canonical query string holds them all. */
export function reportKey(name: ReportName, query: URLSearchParams): readonly [string, ReportName, string] {
  return ["report", name, query.toString()] as const;
}

export function reportUrl(name: ReportName, query: URLSearchParams): string {
  const qs = query.toString();
  return `${reportRoute(name)}${qs ? `?${qs}` : ""}`;
}

/** The CSV of exactly what a table or chart shows: the same route and filters, every
 * row (paging dropped: the CSV is the whole filtered set). */
export function csvUrl(name: ReportName, query: URLSearchParams): string {
  const q = new URLSearchParams(query);
  q.delete("page");
  q.delete("perPage");
  q.set("format", "csv");
  return `${reportRoute(name)}?${q.toString()}`;
}
