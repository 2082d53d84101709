import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { prefetchReports } from "@/components/server/prefetch";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { apiQuery } from "@/lib/ui/filter-params";
import { OVERVIEW_REPORTS } from "@/lib/ui/pages";
import { OverviewView } from "./overview-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const query = apiQuery(values);
  const state = await prefetchReports(caller, OVERVIEW_REPORTS.map((name) => [name, query] as const));
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Overview</h1>
      <HydrationBoundary state={state}>
        <OverviewView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
