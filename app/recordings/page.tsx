import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { prefetchReports } from "@/components/server/prefetch";
import { apiQuery } from "@/lib/ui/filter-params";
import { RECORDINGS_PER_PAGE } from "@/lib/ui/pages";
import { loadView } from "./params";
import { RecordingsView } from "./recordings-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Recordings" };

export default async function RecordingsPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const { view } = loadView(await searchParams);
  const state = await prefetchReports(caller, [
    ["recording-summary", apiQuery(values)],
    [view === "awaiting" ? "recordings-awaiting" : "recordings", apiQuery(values, { perPage: RECORDINGS_PER_PAGE })],
  ]);
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Recordings</h1>
      <HydrationBoundary state={state}>
        <RecordingsView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
