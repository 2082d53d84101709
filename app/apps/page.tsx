import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { prefetchReports } from "@/components/server/prefetch";
import { apiQuery } from "@/lib/ui/filter-params";
import { trendApps } from "@/lib/ui/pages";
import { AppsView } from "./apps-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Tenant apps" };

export default async function AppsPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const state = await prefetchReports(caller, [
    ["apps", apiQuery(values)],
    ...trendApps(values.app, apps).map((app) => ["daily", apiQuery({ ...values, app: [app] })] as const),
  ]);
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Tenant apps</h1>
      <HydrationBoundary state={state}>
        <AppsView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
