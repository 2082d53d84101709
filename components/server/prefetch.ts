/**
 * Server pages: run the analytics reports a page shows, exactly as the API routes
 * answer them (the process's analytics engine, lib/analytics/engine.ts), into a
 * react-query cache under the key the client uses, and dehydrate it for
 * <HydrationBoundary>. The client then renders the first paint from that cache and
 * fetches only when a filter changes.
 */
import { dehydrate, QueryClient, type DehydratedState } from "@tanstack/react-query";
import { analyticsEngine, parseFilters } from "@/lib/analytics";
import type { Caller } from "@/lib/auth/authorize";
import { reportKey, type ReportName } from "@/lib/ui/reports";

export async function prefetchReports(caller: Caller, wanted: ReadonlyArray<readonly [ReportName, URLSearchParams]>): Promise<DehydratedState> {
  const client = new QueryClient({ defaultOptions: { queries: { staleTime: 60_000 } } });
  await Promise.all(
    wanted.map(async ([name, query]) => {
      try {
        const data: unknown = await analyticsEngine().report(name, parseFilters(query), caller);
        client.setQueryData(reportKey(name, query), data);
      } catch {
        // Left out: the client fetches the route and shows its error message.
      }
    }),
  );
  return dehydrate(client);
}
