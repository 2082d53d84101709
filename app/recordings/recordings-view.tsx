"use client";

import Link from "next/link";
import type { Page, RecordingRow } from "@/lib/analytics";
import { DataTable, type Column } from "@/components/data-table";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, Panel, Refreshing } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { RecordingLink } from "@/components/recording-link";
import { useFilters, useReport } from "@/components/use-report";
import { apiQuery } from "@/lib/ui/filter-params";
import { formatDateTime, formatSeconds, label } from "@/lib/ui/format";
import { csvUrl } from "@/lib/ui/reports";
import { RECORDINGS_PER_PAGE, callHref } from "@/lib/ui/pages";

function columns(tz: string): Column<RecordingRow>[] {
  return [
    { id: "start", header: "Recorded", cell: ({ row }) => formatDateTime(row.original.startTime ?? Math.floor(row.original.receivedMs / 1000), tz) },
    { id: "app", header: "App", cell: ({ row }) => row.original.app },
    {
      id: "call",
      header: "Call",
      cell: ({ row }) =>
        row.original.callKnown ? (
          <Link href={callHref(row.original, tz)} className="mono">{row.original.sessionId}</Link>
        ) : (
          <span className="mono" title="This call is not synced yet">{row.original.sessionId}</span>
        ),
    },
    { id: "type", header: "Type", cell: ({ row }) => label(row.original.callType) },
    { id: "duration", header: "Length", meta: { numeric: true }, cell: ({ row }) => formatSeconds(row.original.duration) },
    { id: "link", header: "Recording", cell: ({ row }) => <RecordingLink url={row.original.recordingUrl}>Open<span className="sr-only"> recording of {row.original.sessionId}</span></RecordingLink> },
  ];
}

export function RecordingsView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  const query = apiQuery(values, { perPage: RECORDINGS_PER_PAGE });
  const recs = useReport<Page<RecordingRow>>("recordings", query);
  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="recordings" title={<>Recordings, newest first <Refreshing active={recs.isFetching && recs.isPlaceholderData} /></>} actions={<CsvLink href={csvUrl("recordings", query)} what="recordings" />}>
        <QueryState query={recs} height={400}>
          {(page) =>
            page.meta.pagination.total === 0 ? (
              <EmptyState>No recording matches these filters.</EmptyState>
            ) : (
              <DataTable
                caption="Recordings"
                columns={columns(values.tz)}
                rows={page.data}
                rowKey={(r) => `${r.app}/${r.sessionId}/${r.recordingUrl}`}
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
