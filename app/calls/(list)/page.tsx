import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { prefetchReports } from "@/components/server/prefetch";
import { apiQuery } from "@/lib/ui/filter-params";
import { CALLS_PER_PAGE } from "@/lib/ui/pages";
import { CallsView } from "./calls-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Calls" };

export default async function CallsPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const state = await prefetchReports(caller, [
    ["calls", apiQuery(values, { perPage: CALLS_PER_PAGE })],
    ["totals", apiQuery(values)],
    ["recording-summary", apiQuery(values)],
  ]);
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Calls</h1>
      <HydrationBoundary state={state}>
        <CallsView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
