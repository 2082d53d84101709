import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { prefetchReports } from "@/components/server/prefetch";
import { apiQuery } from "@/lib/ui/filter-params";
import { PARTICIPANTS_PER_PAGE } from "@/lib/ui/pages";
import { ParticipantsView } from "./participants-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Participants" };

export default async function ParticipantsPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const state = await prefetchReports(caller, [["participants", apiQuery(values, { perPage: PARTICIPANTS_PER_PAGE })]]);
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Participants</h1>
      <HydrationBoundary state={state}>
        <ParticipantsView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
