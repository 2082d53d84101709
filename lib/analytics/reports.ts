import { APP_COLUMNS, AWAITING_RECORDING_COLUMNS, BREAKDOWN_COLUMNS, CALL_COLUMNS, CALL_RAW_COLUMNS, DAILY_COLUMNS, DURATION_COLUMNS, ENGAGEMENT_COLUMNS, HEATMAP_COLUMNS, PARTICIPANT_COLUMNS, RECORDING_COLUMNS } from "@/lib/export/columns";
import { getCalls, iterateCalls } from "./calls";
import { callsCsvBatches, callsCsvOrder } from "./calls-csv";
import { listOf, type ReportRoute } from "./report-route";
import { getBreakdowns, getConcurrencyHeatmap, getDurationDistribution, getEngagement, getTotals } from "./insights";
import { getRecordings, iterateRecordings } from "./recordings";
import { getAwaitingRecordings, getRecordingSummary, iterateAwaitingRecordings, withRecordingFacts } from "./recording-status";
import { getAppUsage, getDailyUsage, getParticipantUsage } from "./usage";
import type { Filters } from "./filters";
import type { Scope } from "./query";
import type { Db } from "@/db/client";

/** Every analytics route: its report function (JSON) and its CSV rows and columns. */

/** Participants in the requested order: `sort=minutes` by total minutes, else by calls
 * (the report's own order, most first); `order=asc` turns either around. The JSON page
 * and the CSV share it, so a download lists exactly what the dashboard table shows. */
function sortedParticipants(db: Db, f: Filters, scope: Scope) {
  const rows = getParticipantUsage(db, f, scope);
  if (f.sort === "minutes") rows.sort((a, b) => b.totalMinutes - a.totalMinutes || b.calls - a.calls || a.app.localeCompare(b.app) || a.uid.localeCompare(b.uid));
  if (f.order === "asc") rows.reverse();
  return rows;
}

/** The participants report is paged in JSON (it can hold thousands of uids). */
function participantsPage(db: Db, f: Filters, scope: Scope) {
  const all = sortedParticipants(db, f, scope);
  const data = all.slice((f.page - 1) * f.perPage, f.page * f.perPage);
  return { data, meta: { pagination: { total: all.length, count: data.length, per_page: f.perPage, current_page: f.page, total_pages: Math.ceil(all.length / f.perPage) } } };
}

const report = <Json, Row>(r: ReportRoute<Json, Row>): ReportRoute<Json, Row> => r;

/* `offThread`: what the analytics worker computes (worker-host.ts). Every report that
 * scans the in-memory store runs there; recordings (indexed SQLite) and the calls list's
 * CSV rows are read on the request's thread (a worker would have to buffer them) — the
 * calls CSV's order is the worker's (`order`: the pks, sorted from the store, head first). */

export const REPORTS = {
  calls: report({
    name: "calls",
    offThread: { json: true, order: true },
    json: (db: Db, f: Filters, scope: Scope) => withRecordingFacts(db, getCalls(db, f, scope), scope),
    csv: { rows: iterateCalls, columns: CALL_COLUMNS, raw: { order: callsCsvOrder, rows: callsCsvBatches, columns: CALL_RAW_COLUMNS } },
  }),
  participants: report({ name: "participants", offThread: { json: true, csv: true }, json: participantsPage, csv: { rows: sortedParticipants, columns: PARTICIPANT_COLUMNS } }),
  apps: report({ name: "apps", offThread: { json: true, csv: true }, json: listOf(getAppUsage), csv: { rows: getAppUsage, columns: APP_COLUMNS } }),
  daily: report({ name: "daily", offThread: { json: true, csv: true }, json: listOf(getDailyUsage), csv: { rows: getDailyUsage, columns: DAILY_COLUMNS } }),
  recordings: report({ name: "recordings", json: getRecordings, csv: { rows: iterateRecordings, columns: RECORDING_COLUMNS } }),
  breakdowns: report({ name: "breakdowns", offThread: { json: true, csv: true }, json: listOf(getBreakdowns), csv: { rows: getBreakdowns, columns: BREAKDOWN_COLUMNS } }),
  durations: report({ name: "durations", offThread: { json: true, csv: true }, json: listOf(getDurationDistribution), csv: { rows: getDurationDistribution, columns: DURATION_COLUMNS } }),
  heatmap: report({ name: "heatmap", offThread: { json: true, csv: true }, json: listOf(getConcurrencyHeatmap), csv: { rows: getConcurrencyHeatmap, columns: HEATMAP_COLUMNS } }),
  engagement: report({ name: "engagement", offThread: { json: true, csv: true }, json: listOf(getEngagement), csv: { rows: getEngagement, columns: ENGAGEMENT_COLUMNS } }),
  /* The platform's recording flag next to the links the webhooks delivered (SQLite: recording-status.ts). */
  "recording-summary": report({
    name: "recording-summary",
    json: (db: Db, f: Filters, scope: Scope) => ({ data: getRecordingSummary(db, f, scope) }),
    csv: {
      rows: (db: Db, f: Filters, scope: Scope) => [getRecordingSummary(db, f, scope)],
      columns: [{ key: "flagged" }, { key: "withLink" }, { key: "awaiting" }, { key: "linkNotFlagged" }, { key: "links" }, { key: "linksForUnsyncedCalls" }],
    },
  }),
  "recordings-awaiting": report({ name: "recordings-awaiting", json: getAwaitingRecordings, csv: { rows: iterateAwaitingRecordings, columns: AWAITING_RECORDING_COLUMNS } }),
  totals: report({
    name: "totals",
    offThread: { json: true, csv: true },
    json: getTotals,
    csv: {
      rows: (db: Db, f: Filters, scope: Scope) => {
        const t = getTotals(db, f, scope);
        return [{ period: "current", ...t.current }, ...(t.previous ? [{ period: "previous", ...t.previous }] : [])];
      },
      columns: [
        { key: "period" }, { key: "calls" }, { key: "audioMinutes", kind: "decimal" }, { key: "videoMinutes", kind: "decimal" },
        { key: "totalMinutes", kind: "decimal" }, { key: "avgDurationSeconds", kind: "decimal" }, { key: "avgParticipants", kind: "decimal" },
        { key: "recordingShare", kind: "decimal" }, { key: "unansweredRate", kind: "decimal" },
      ],
    },
  }),
};

export type ReportName = keyof typeof REPORTS;
