"use client";

import Link from "next/link";
import { useState } from "react";
import { useQueryStates } from "nuqs";
import type { CombinedParticipantRow, ParticipantUsageRow } from "@/lib/analytics";
import { DataTable, type Column } from "@/components/data-table";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, Panel, Refreshing } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { useFilters, useReport } from "@/components/use-report";
import { withFilters } from "@/lib/ui/carry";
import { apiQuery, pageQuery, type FilterValues } from "@/lib/ui/filter-params";
import { formatCount, formatDateTime, formatMinutes } from "@/lib/ui/format";
import { PARTICIPANTS_PER_PAGE } from "@/lib/ui/pages";
import { csvUrl } from "@/lib/ui/reports";
import { participantParsers, personExtra } from "./params";

/**
 * What the two per-person counts mean, said where they are shown: they count the person's
 * own part in a call, so they differ from the Calls page's Status, which is the call's
 * outcome as a whole (a group call one invitee never answered still ends "ended").
 */
const JOINED_MEANS = "Calls this person joined (their own participant row has a join).";
const UNANSWERED_MEANS = "Calls in which this person's own invitation was not answered (their participant row says unanswered), whatever became of the call.";
const COUNTS_EXPLAINED = (
  <p className="muted hint" data-testid="participant-counts-explained">
    <strong>Calls</strong>: calls this person is listed in. <strong>Joined by them</strong> and <strong>Not answered by them</strong> count this person&apos;s own part in those
    calls, so they need not add up to Calls and differ from the Calls page, where Status is the outcome of the call as a whole (a group call that one invitee did not
    answer still ends as &quot;ended&quot;; a call someone else did not answer can still list this person as joined).
  </p>
);

function columns(values: FilterValues): Column<ParticipantUsageRow>[] {
  const callsOf = (r: ParticipantUsageRow) => `/calls?${pageQuery({ ...values, app: [r.app], uid: r.uid }).toString()}`;
  return [
    { id: "uid", header: "Participant", cell: ({ row }) => <Link href={callsOf(row.original)} data-testid="participant-link">{row.original.uid}</Link> },
    { id: "app", header: "App", cell: ({ row }) => row.original.app },
    // "start" is the API's default order of this report: most calls first.
    { id: "calls", header: "Calls", meta: { numeric: true, sortKey: "start" }, cell: ({ row }) => formatCount(row.original.calls) },
    { id: "joined", header: () => <abbr title={JOINED_MEANS}>Joined by them</abbr>, meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.joined) },
    { id: "unanswered", header: () => <abbr title={UNANSWERED_MEANS}>Not answered by them</abbr>, meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.unanswered) },
    { id: "audio", header: "Audio minutes", meta: { numeric: true }, cell: ({ row }) => formatMinutes(row.original.audioMinutes) },
    { id: "video", header: "Video minutes", meta: { numeric: true }, cell: ({ row }) => formatMinutes(row.original.videoMinutes) },
    { id: "minutes", header: "Total minutes", meta: { numeric: true, sortKey: "minutes" }, cell: ({ row }) => formatMinutes(row.original.totalMinutes) },
    { id: "last", header: "Last call", cell: ({ row }) => formatDateTime(row.original.lastCallAt, values.tz) },
  ];
}

/** The same uid across apps: one row, the apps it is used in, its calls in all of them. */
function combinedColumns(values: FilterValues): Column<CombinedParticipantRow>[] {
  const callsOf = (r: CombinedParticipantRow) => `/calls?${pageQuery({ ...values, app: r.apps, uid: r.uid }).toString()}`;
  return [
    { id: "uid", header: "Participant", cell: ({ row }) => <Link href={callsOf(row.original)} data-testid="participant-link">{row.original.uid}</Link> },
    { id: "apps", header: "Apps", cell: ({ row }) => <span data-testid="participant-apps">{row.original.apps.join(", ")}</span> },
    { id: "calls", header: "Calls", meta: { numeric: true, sortKey: "start" }, cell: ({ row }) => formatCount(row.original.calls) },
    { id: "joined", header: () => <abbr title={JOINED_MEANS}>Joined by them</abbr>, meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.joined) },
    { id: "unanswered", header: () => <abbr title={UNANSWERED_MEANS}>Not answered by them</abbr>, meta: { numeric: true }, cell: ({ row }) => formatCount(row.original.unanswered) },
    { id: "minutes", header: "Total minutes", meta: { numeric: true, sortKey: "minutes" }, cell: ({ row }) => formatMinutes(row.original.totalMinutes) },
    { id: "last", header: "Last call", cell: ({ row }) => formatDateTime(row.original.lastCallAt, values.tz) },
  ];
}

/**
 * The search that finds a person: their own row(s), where the uid filter keeps the calls they
 * are in (and so lists everyone in them). Applied on Enter or on leaving the field.
 */
function PersonSearch({ value, onCommit }: { value: string; onCommit: (text: string) => void }) {
  const [draft, setDraft] = useState(value);
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    // The URL changed (back button, a link): show its value.
    setSeen(value);
    setDraft(value);
  }
  const commit = () => {
    if (draft.trim() !== value) onCommit(draft.trim());
  };
  return (
    <div className="field person-search">
      <label htmlFor="person-search">Find a participant</label>
      <input
        id="person-search"
        name="person"
        type="search"
        size={20}
        value={draft}
        placeholder="Part of a uid"
        aria-describedby="person-search-hint"
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            commit();
          }
        }}
      />
      <span id="person-search-hint" className="muted hint">
        Lists only the uids that contain this text (letters in either case), with their totals over the filtered calls.
      </span>
    </div>
  );
}

export function ParticipantsView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  const [{ view, person }, setOwn] = useQueryStates(participantParsers, { history: "push", scroll: false });
  const across = view === "across-apps";
  const query = apiQuery(values, { perPage: PARTICIPANTS_PER_PAGE, extra: personExtra(person) });
  const search = <PersonSearch value={person ?? ""} onCommit={(text) => void Promise.all([setOwn({ person: text || null }), setValues({ page: null })])} />;
  const noneFound = person ? <EmptyState>No participant&apos;s uid contains &quot;{person}&quot; in these calls.</EmptyState> : <EmptyState>No participant matches these filters.</EmptyState>;
  const people = useReport("participants", query, !across);
  const combined = useReport("participants-combined", query, across);
  const sortProps = {
    sort: values.sort === "minutes" ? ("minutes" as const) : ("start" as const),
    order: values.order,
    onSort: (sort: string, order: "asc" | "desc") => void setValues({ sort: sort === "start" ? null : (sort as "minutes"), order: order === "desc" ? null : order, page: null }),
    onPage: (p: number) => void setValues({ page: p === 1 ? null : p }),
  };
  const toggle = (
    <label className="inline-field">
      <input type="checkbox" checked={across} onChange={(e) => void Promise.all([setOwn({ view: e.target.checked ? "across-apps" : null }), setValues({ page: null })])} data-testid="across-apps" /> One row per uid across apps
    </label>
  );
  if (across) {
    return (
      <>
        <FilterBar apps={apps} />
        <Panel id="participants" title={<>Participants across apps <Refreshing active={combined.isFetching && combined.isPlaceholderData} /></>} actions={<>{toggle}<CsvLink href={csvUrl("participants-combined", query)} what="participants across apps" /></>}>
          <p className="muted hint">A uid used in several apps is one row here: its calls, joins and minutes in all of them.</p>
          {search}
          {COUNTS_EXPLAINED}
          <QueryState query={combined} height={400}>
            {(page) =>
              page.meta.pagination.total === 0 ? (
                noneFound
              ) : (
                <DataTable caption="Participants across apps" columns={combinedColumns(values)} rows={page.data} rowKey={(r) => r.uid} rowProps={(r) => ({ "data-uid": r.uid })} pagination={page.meta.pagination} {...sortProps} />
              )
            }
          </QueryState>
        </Panel>
      </>
    );
  }
  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="participants" title={<>Minutes and calls per participant <Refreshing active={people.isFetching && people.isPlaceholderData} /></>} actions={<>{toggle}<CsvLink href={csvUrl("participants", query)} what="participants" /></>}>
        <p className="muted hint">
          The uid filter keeps the calls that uid took part in, so everyone in those calls is listed; to find one person, search for them below. Select a
          participant to see their calls.{" "}
          <Link href={withFilters("/calls", pageQuery(values))}>The calls of these filters</Link>
        </p>
        {search}
        {COUNTS_EXPLAINED}
        <QueryState query={people} height={400}>
          {(page) =>
            page.meta.pagination.total === 0 ? (
              noneFound
            ) : (
              <DataTable
                caption="Participants"
                columns={columns(values)}
                rows={page.data}
                rowKey={(r) => `${r.app}/${r.uid}`}
                rowProps={(r) => ({ "data-uid": r.uid })}
                pagination={page.meta.pagination}
                {...sortProps}
              />
            )
          }
        </QueryState>
      </Panel>
    </>
  );
}
