import { HydrationBoundary } from "@tanstack/react-query";
import type { Metadata } from "next";
import { dashboardPage, type PageSearchParams } from "@/components/server/dashboard-page";
import { prefetchReports } from "@/components/server/prefetch";
import { apiQuery } from "@/lib/ui/filter-params";
import { PARTICIPANTS_PER_PAGE } from "@/lib/ui/pages";
import { loadParticipantParams, personExtra } from "./params";
import { ParticipantsView } from "./participants-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Participants" };

export default async function ParticipantsPage({ searchParams }: { searchParams: PageSearchParams }) {
  const { caller, values, apps } = await dashboardPage(searchParams);
  const { view, person } = loadParticipantParams(await searchParams);
  const query = apiQuery(values, { perPage: PARTICIPANTS_PER_PAGE, extra: personExtra(person) });
  const state = await prefetchReports(caller, [[view === "across-apps" ? "participants-combined" : "participants", query]]);
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <h1>Participants</h1>
      <HydrationBoundary state={state}>
        <ParticipantsView apps={apps} />
      </HydrationBoundary>
    </main>
  );
}
