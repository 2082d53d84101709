"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useQueryStates } from "nuqs";
import { allParsers } from "@/lib/ui/filter-params";
import { reportKey, reportUrl, type ReportJson, type ReportName } from "@/lib/ui/reports";
import { withBasePath } from "@/lib/http/base-path";

/** An analytics route's refusal: the HTTP status and the `{error: {message}}` it gave. */
export class ReportError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Only a server's trouble (5xx) or a dropped connection is worth one more try; a 4xx answers the same again. */
export function retryReport(failures: number, error: unknown): boolean {
  return failures < 1 && !(error instanceof ReportError && error.status < 500);
}

/** GET an analytics route; its `{error: {message}}` becomes the Error's message. */
export async function fetchReport<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(withBasePath(url), { headers: { accept: "application/json" }, signal, cache: "no-store" });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const err = body && typeof body === "object" && "error" in body ? (body as { error?: { message?: unknown } }).error : undefined;
    throw new ReportError(typeof err?.message === "string" ? err.message : `The server answered ${res.status}.`, res.status);
  }
  return body as T;
}

/**
 * One report for one query, typed by the table of reports (its JSON answer); the previous
 * answer stays on screen while the next loads. `enabled`: false until it is shown.
 */
export function useReport<N extends ReportName>(name: N, query: URLSearchParams, enabled = true) {
  return useQuery({
    queryKey: reportKey(name, query),
    queryFn: ({ signal }) => fetchReport<ReportJson<N>>(reportUrl(name, query), signal),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** The page's filters, paging and sorting, in the URL (each change a history entry). */
/** The filters in the URL; `shallow: false` where the page renders on the server from them (the ops pages). */
export function useFilters({ shallow = true }: { shallow?: boolean } = {}) {
  return useQueryStates(allParsers, { history: "push", scroll: false, shallow });
}
