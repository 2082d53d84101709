"use client";

import Link from "next/link";
import { useQueryStates } from "nuqs";
import type { AwaitingRecordingRow, RecordingRow } from "@/lib/analytics";
import { DataTable, type Column } from "@/components/data-table";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, Panel, Refreshing } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { RecordingSummaryLine, WHY_NO_LINK } from "@/components/recording-facts";
import { RecordingLink } from "@/components/recording-link";
import { useFilters, useReport } from "@/components/use-report";
import { apiQuery } from "@/lib/ui/filter-params";
import { label } from "@/lib/platform/labels";
import { formatCount, formatDateTime, formatSeconds } from "@/lib/ui/format";
import { csvUrl } from "@/lib/ui/reports";
import { RECORDINGS_PER_PAGE, callHref } from "@/lib/ui/pages";
import { viewParsers } from "./params";

function linkColumns(tz: string): Column<RecordingRow>[] {
  return [
    { id: "start", header: "Recorded", cell: ({ row }) => formatDateTime(row.original.startTime ?? Math.floor(row.original.receivedMs / 1000), tz) },
    { id: "app", header: "App", meta: { hide: "phone" }, cell: ({ row }) => row.original.app },
    {
      id: "call",
      header: "Call",
      cell: ({ row }) =>
        row.original.callKnown ? (
          <Link href={callHref(row.original, tz)} className="mono cell-clip">{row.original.sessionId}</Link>
        ) : (
          <span className="mono cell-clip" title="This call is not synced yet">{row.original.sessionId}</span>
        ),
    },
    { id: "type", header: "Type", meta: { hide: "tablet" }, cell: ({ row }) => label(row.original.callType) },
    { id: "duration", header: "Length", meta: { numeric: true }, cell: ({ row }) => formatSeconds(row.original.duration) },
    { id: "link", header: "Recording", cell: ({ row }) => <RecordingLink url={row.original.recordingUrl}>Open<span className="sr-only"> recording of {row.original.sessionId}</span></RecordingLink> },
  ];
}

function awaitingColumns(tz: string): Column<AwaitingRecordingRow>[] {
  return [
    { id: "start", header: "Started", cell: ({ row }) => <Link href={callHref(row.original, tz)}>{formatDateTime(row.original.startAt, tz)}</Link> },
    { id: "app", header: "App", meta: { hide: "phone" }, cell: ({ row }) => row.original.app },
    { id: "call", header: "Call", meta: { hide: "phone" }, cell: ({ row }) => <span className="mono cell-clip" title={row.original.sessionId}>{row.original.sessionId}</span> },
    { id: "type", header: "Type", meta: { hide: "tablet" }, cell: ({ row }) => `${label(row.original.type)} ${label(row.original.mode).toLowerCase()}` },
    { id: "status", header: "Status", meta: { hide: "tablet" }, cell: ({ row }) => <span className={`status status-${row.original.status ?? "other"}`}>{label(row.original.status)}</span> },
    { id: "duration", header: "Duration", meta: { numeric: true }, cell: ({ row }) => formatSeconds(row.original.durationSeconds) },
  ];
}

export function RecordingsView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  const [{ view }, setView] = useQueryStates(viewParsers, { history: "push", scroll: false });
  const query = apiQuery(values, { perPage: RECORDINGS_PER_PAGE });
  const filtersOnly = apiQuery(values);
  const summary = useReport("recording-summary", filtersOnly);
  const recs = useReport("recordings", query, view === "links");
  const awaiting = useReport("recordings-awaiting", query, view === "awaiting");
  const tabHref = (v: typeof view) => `/recordings?${new URLSearchParams([...filtersOnly, ...(v === "links" ? [] : [["view", v]])]).toString()}`;
  const counts = summary.data?.data;
  const tab = (v: typeof view, text: string, n: number | undefined) => (
    <li>
      <Link
        href={tabHref(v)}
        aria-current={view === v ? "page" : undefined}
        data-testid={`tab-${v}`}
        onClick={(e) => {
          e.preventDefault();
          void setView({ view: v === "links" ? null : v });
          void setValues({ page: null });
        }}
      >
        {text}
        {n !== undefined ? ` (${formatCount(n)})` : ""}
      </Link>
    </li>
  );

  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="recording-summary" title="Flags and links" actions={<CsvLink href={csvUrl("recording-summary", filtersOnly)} what="recording flags and links" />}>
        <QueryState query={summary} height={40}>
          {(s) => <RecordingSummaryLine summary={s.data} awaitingHref={tabHref("awaiting")} />}
        </QueryState>
      </Panel>
      <ul className="tabs" aria-label="Recordings">
        {tab("links", "Links received", counts ? counts.links : undefined)}
        {tab("awaiting", "Flagged, awaiting their link", counts?.awaiting)}
      </ul>
      {view === "links" ? (
        <Panel id="recordings" title={<>Recording links, newest first <Refreshing active={recs.isFetching && recs.isPlaceholderData} /></>} actions={<CsvLink href={csvUrl("recordings", query)} what="recordings" />}>
          <QueryState query={recs} height={400}>
            {(page) =>
              page.meta.pagination.total === 0 ? (
                <EmptyState>No recording link matches these filters. {WHY_NO_LINK}</EmptyState>
              ) : (
                <DataTable
                  caption="Recording links"
                  columns={linkColumns(values.tz)}
                  rows={page.data}
                  rowKey={(r) => `${r.app}/${r.sessionId}/${r.recordingUrl}`}
                  pagination={page.meta.pagination}
                  onPage={(p) => void setValues({ page: p === 1 ? null : p })}
                />
              )
            }
          </QueryState>
        </Panel>
      ) : (
        <Panel id="recordings-awaiting" title={<>Flagged calls awaiting their link <Refreshing active={awaiting.isFetching && awaiting.isPlaceholderData} /></>} actions={<CsvLink href={csvUrl("recordings-awaiting", query)} what="calls awaiting their recording link" />}>
          <p className="muted hint">The platform flags these calls as recorded; no recording_generated webhook has delivered their link yet.</p>
          <QueryState query={awaiting} height={400}>
            {(page) =>
              page.meta.pagination.total === 0 ? (
                <EmptyState>Every flagged call matching these filters has its link.</EmptyState>
              ) : (
                <DataTable
                  caption="Flagged calls awaiting their recording link"
                  columns={awaitingColumns(values.tz)}
                  rows={page.data}
                  rowKey={(r) => `${r.app}/${r.sessionId}`}
                  rowProps={(r) => ({ "data-session": r.sessionId })}
                  pagination={page.meta.pagination}
                  onPage={(p) => void setValues({ page: p === 1 ? null : p })}
                />
              )
            }
          </QueryState>
        </Panel>
      )}
    </>
  );
}
