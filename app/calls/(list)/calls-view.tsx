"use client";

import Link from "next/link";
import { DataTable, type Column } from "@/components/data-table";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CallDuration } from "@/components/call-duration";
import { CsvLink, EmptyState, Panel, Refreshing } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { RecordingBadge, RecordingSummaryLine } from "@/components/recording-facts";
import { useFilters, useReport } from "@/components/use-report";
import { withFilters } from "@/lib/ui/carry";
import { apiQuery, pageQuery } from "@/lib/ui/filter-params";
import { label } from "@/lib/platform/labels";
import { formatCount, formatDateTime, formatMinutes, formatPercent, formatSeconds } from "@/lib/ui/format";
import { CALLS_PER_PAGE, callHref } from "@/lib/ui/pages";
import { csvUrl, type ReportJson } from "@/lib/ui/reports";

/** One row of the calls report's JSON (lib/analytics/report-registry.ts). */
type CallRow = ReportJson<"calls">["data"][number];

/** The list's columns; on a tablet or phone the least telling ones are left out (the call's page has them all). */

function columns(tz: string, list: URLSearchParams): Column<CallRow>[] {
  return [
    { id: "start", header: "Started", meta: { sortKey: "start" }, cell: ({ row }) => <Link href={callHref(row.original, tz, list)}>{formatDateTime(row.original.startAt, tz)}</Link> },
    { id: "app", header: "App", meta: { hide: "tablet" }, cell: ({ row }) => row.original.app },
    { id: "type", header: "Type", meta: { hide: "phone" }, cell: ({ row }) => label(row.original.type) },
    { id: "mode", header: "Mode", meta: { hide: "tablet" }, cell: ({ row }) => label(row.original.mode) },
    { id: "status", header: "Status", cell: ({ row }) => <span className={`status status-${row.original.status ?? "other"}`}>{label(row.original.status)}</span> },
    {
      id: "who",
      header: "Initiator → receiver",
      meta: { hide: "phone" },
      cell: ({ row }) => {
        const r = row.original;
        const who = `${r.initiator ?? "—"} → ${r.receiver ?? "—"}`;
        return (
          <span className="cell-clip who" title={`${who} (${label(r.receiverType)})`}>
            {who} <span className="muted">({label(r.receiverType)})</span>
          </span>
        );
      },
    },
    { id: "participants", header: "People", meta: { numeric: true, sortKey: "participants", hide: "phone" }, cell: ({ row }) => formatCount(row.original.totalParticipants) },
    { id: "duration", header: "Duration", meta: { numeric: true, sortKey: "duration" }, cell: ({ row }) => <CallDuration status={row.original.status} startedAt={row.original.startedAt} durationSeconds={row.original.durationSeconds} /> },
    { id: "minutes", header: () => <span title="Every participant's audio and video minutes, summed">Part. minutes</span>, meta: { numeric: true, sortKey: "minutes", hide: "phone" }, cell: ({ row }) => formatMinutes(row.original.totalAudioMinutes + row.original.totalVideoMinutes) },
    { id: "rec", header: "Recording", cell: ({ row }) => <RecordingBadge facts={row.original.recording} /> },
  ];
}

export function CallsView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  const listQuery = apiQuery(values, { perPage: CALLS_PER_PAGE });
  const totalsQuery = apiQuery(values);
  const calls = useReport("calls", listQuery);
  const totals = useReport("totals", totalsQuery);
  const recordings = useReport("recording-summary", totalsQuery);

  return (
    <>
      <FilterBar apps={apps} />
      <Panel
        id="call-totals"
        title="Totals of these calls"
        actions={
          <>
            <Link href={withFilters("/participants", pageQuery(values))}>Participants of these calls</Link>
            <CsvLink href={csvUrl("totals", totalsQuery)} what="totals of these calls" />
          </>
        }
      >
        <QueryState query={totals} height={60}>
          {({ current: t }) => (
            <dl className="totals" data-testid="call-totals">
              <div><dt>Calls</dt><dd data-testid="total-calls">{formatCount(t.calls)}</dd></div>
              <div><dt>Participant minutes, audio</dt><dd>{formatMinutes(t.audioMinutes)}</dd></div>
              <div><dt>Participant minutes, video</dt><dd>{formatMinutes(t.videoMinutes)}</dd></div>
              <div><dt>Average call duration</dt><dd>{formatSeconds(t.avgDurationSeconds)}</dd></div>
              <div><dt title="Flagged by the platform or with a link received">Recorded</dt><dd>{formatPercent(t.recordingShare)}</dd></div>
              <div><dt>Unanswered</dt><dd>{formatPercent(t.unansweredRate)}</dd></div>
            </dl>
          )}
        </QueryState>
        {recordings.data ? <RecordingSummaryLine summary={recordings.data.data} awaitingHref={`/recordings?${new URLSearchParams([...totalsQuery, ["view", "awaiting"]]).toString()}`} /> : null}
      </Panel>
      <Panel id="calls" title={<>Calls <Refreshing active={calls.isFetching && calls.isPlaceholderData} /></>} actions={<CsvLink href={csvUrl("calls", listQuery)} what="these calls" />}>
        <QueryState query={calls} height={400}>
          {(page) =>
            page.data.length === 0 && page.meta.pagination.total === 0 ? (
              <EmptyState>No call matches these filters.</EmptyState>
            ) : (
              <DataTable
                caption="Calls"
                columns={columns(values.tz, listState(values))}
                rows={page.data}
                rowKey={(r) => `${r.app}/${r.sessionId}`}
                rowProps={(r) => ({ "data-session": r.sessionId })}
                sort={values.sort}
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

/** The list's filters, page and sort as its URL holds them (the call's page leads back to them). */
function listState(values: ReturnType<typeof useFilters>[0]): URLSearchParams {
  const q = apiQuery(values, { perPage: CALLS_PER_PAGE });
  q.delete("perPage");
  if (q.get("page") === "1") q.delete("page");
  q.set("tz", values.tz);
  return q;
}
