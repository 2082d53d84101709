"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useQueryStates } from "nuqs";
import { allParsers } from "@/lib/ui/filter-params";
import { reportKey, reportUrl, type ReportJson, type ReportName } from "@/lib/ui/reports";
import { FetchError, fetchJson } from "@/lib/ui/fetch-json";

/** Only a server's trouble (5xx) or a dropped connection is worth one more try; a 4xx answers the same again. */
export function retryReport(failures: number, error: unknown): boolean {
  return failures < 1 && !(error instanceof FetchError && error.status < 500);
}

/** The react-query options of one report for one query (its key, and its fetch typed by the table of reports). */
export function reportQuery<N extends ReportName>(name: N, query: URLSearchParams) {
  return {
    queryKey: reportKey(name, query),
    queryFn: ({ signal }: { signal: AbortSignal }) => fetchJson<ReportJson<N>>(reportUrl(name, query), { signal }),
  };
}

/**
 * One report for one query, typed by the table of reports (its JSON answer); the previous
 * answer stays on screen while the next loads. `enabled`: false until it is shown.
 */
export function useReport<N extends ReportName>(name: N, query: URLSearchParams, enabled = true) {
  return useQuery({
    ...reportQuery(name, query),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** The page's filters, paging and sorting, in the URL (each change a history entry); `shallow: false` where the page renders on the server from them (the ops pages). */
export function useFilters({ shallow = true }: { shallow?: boolean } = {}) {
  return useQueryStates(allParsers, { history: "push", scroll: false, shallow });
}
