/**
 * Server pages: run the analytics reports a page shows, exactly as the API routes
 * answer them (`REPORTS[name].json`), into a react-query cache under the key the client
 * uses, and dehydrate it for <HydrationBoundary>. The client then renders the first
 * paint from that cache and fetches only when a filter changes.
 */
import { dehydrate, QueryClient, type DehydratedState } from "@tanstack/react-query";
import { db } from "@/db";
import { parseFilters } from "@/lib/analytics";
import { REPORTS } from "@/lib/analytics/reports";
import type { Caller } from "@/lib/auth/authorize";
import { reportKey, type ReportName } from "@/lib/ui/reports";

export function prefetchReports(caller: Caller, wanted: ReadonlyArray<readonly [ReportName, URLSearchParams]>): DehydratedState {
  const client = new QueryClient({ defaultOptions: { queries: { staleTime: 60_000 } } });
  const warehouse = db();
  for (const [name, query] of wanted) {
    try {
      const data: unknown = REPORTS[name].json(warehouse, parseFilters(query), caller);
      client.setQueryData(reportKey(name, query), data);
    } catch {
      // Left out: the client fetches the route and shows its error message.
    }
  }
  return dehydrate(client);
}
