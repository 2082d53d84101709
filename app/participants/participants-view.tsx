"use client";

import Link from "next/link";
import type { Page, ParticipantUsageRow } from "@/lib/analytics";
import { DataTable, type Column } from "@/components/data-table";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, Panel, Refreshing } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { useFilters, useReport } from "@/components/use-report";
import { apiQuery, type FilterValues } from "@/lib/ui/filter-params";
import { formatCount, formatDateTime, formatMinutes } from "@/lib/ui/format";
import { PARTICIPANTS_PER_PAGE } from "@/lib/ui/pages";
import { csvUrl } from "@/lib/ui/reports";

function columns(values: FilterValues): Column<ParticipantUsageRow>[] {
  const callsOf = (r: ParticipantUsageRow) => `/calls?${apiQuery({ ...values, app: [r.app], uid: r.uid }).toString()}`;
  return [
    { id: "uid", header: "Participant", cell: ({ row }) => <Link href={callsOf(row.original)} data-testid="participant-link">{row.original.uid}</Link> },
    { id: "app", header: "App", cell: ({ row }) => row.original.app },
    // "start" is the API's default order of this report: most calls first.
    { id: "calls", header: "Calls", meta: { numeric: true, sortKey: "start" }, cell: ({ row }) => formatCount(row.original.calls) },
    { id: "joined", header: "Joined", meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.joined) },
    { id: "unanswered", header: "Unanswered", meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.unanswered) },
    { id: "audio", header: "Audio minutes", meta: { numeric: true }, cell: ({ row }) => formatMinutes(row.original.audioMinutes) },
    { id: "video", header: "Video minutes", meta: { numeric: true }, cell: ({ row }) => formatMinutes(row.original.videoMinutes) },
    { id: "minutes", header: "Total minutes", meta: { numeric: true, sortKey: "minutes" }, cell: ({ row }) => formatMinutes(row.original.totalMinutes) },
    { id: "last", header: "Last call", cell: ({ row }) => formatDateTime(row.original.lastCallAt, values.tz) },
  ];
}

export function ParticipantsView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  const query = apiQuery(values, { perPage: PARTICIPANTS_PER_PAGE });
  const people = useReport<Page<ParticipantUsageRow>>("participants", query);
  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="participants" title={<>Minutes and calls per participant <Refreshing active={people.isFetching && people.isPlaceholderData} /></>} actions={<CsvLink href={csvUrl("participants", query)} what="participants" />}>
        <p className="muted hint">Search a participant with the uid filter; select a participant to see their calls.</p>
        <QueryState query={people} height={400}>
          {(page) =>
            page.meta.pagination.total === 0 ? (
              <EmptyState>No participant matches these filters.</EmptyState>
            ) : (
              <DataTable
                caption="Participants"
                columns={columns(values)}
                rows={page.data}
                rowKey={(r) => `${r.app}/${r.uid}`}
                rowProps={(r) => ({ "data-uid": r.uid })}
                sort={values.sort === "minutes" ? "minutes" : "start"}
                order={values.order}
                onSort={(sort, order) => void setValues({ sort: sort === "start" ? null : sort, order: order === "desc" ? null : order, page: null })}
                pagination={page.meta.pagination}
                onPage={(p) => void setValues({ page: p === 1 ? null : p })}
              />
            )
          }
        </QueryState>
      </Panel>
    </>
  );
}
