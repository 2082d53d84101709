"use client";

import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ErrorState, Skeleton } from "./panel";

/**
 * Loading, error or the data of one report. An error wins over data still held from an
 * earlier query: rows that no longer answer the filters on screen are never shown as if
 * they did (the message says what the server refused).
 */
export function QueryState<T>({ query, height = 200, children }: { query: UseQueryResult<T>; height?: number; children: (data: T) => ReactNode }) {
  if (query.isError && !query.isFetching) return <ErrorState message={query.error.message} onRetry={() => void query.refetch()} />;
  if (query.data !== undefined) return <div className={query.isPlaceholderData ? "is-stale" : undefined}>{children(query.data)}</div>;
  if (query.isError) return <ErrorState message={query.error.message} onRetry={() => void query.refetch()} />;
  return <Skeleton height={height} />;
}
