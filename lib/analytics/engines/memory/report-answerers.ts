import type { Db } from "@/db/client";
import type { Filters } from "../../filters";
import { pageOf, round3, type CombinedParticipantRow, type TotalsCsvRow } from "../../report-types";
import type { ReportName } from "../../report-csv-writers";
import type { Scope } from "../../scope";
import { getCalls, iterateCalls } from "./reports/calls";
import { callsCsvBatches, callsCsvOrder } from "./reports/calls-csv";
import { getConcurrencyHeatmap } from "./reports/heatmap";
import { getBreakdowns, getDurationDistribution, getEngagement, getTotals } from "./reports/insights";
import { getRecordings, iterateRecordings } from "./reports/recordings";
import { getClients } from "./reports/clients";
import { getAwaitingRecordings, getRecordingSummary, iterateAwaitingRecordings, withRecordingFacts } from "./reports/recording-status";
import { listOf, type ReportAnswerer } from "./report-answerer";
import { compareBinary, getAppUsage, getDailyUsage, getParticipantPage, getParticipantUsage } from "./reports/usage";

/** How the memory engine answers every report of the table (lib/analytics/report-registry.ts). */

/** Participants in the requested order: `sort=minutes` by total minutes, else by calls
 * (the report's own order, most first: calls, then app pk and uid bytes); `order=asc`
 * turns either around. The JSON page and the CSV share it, so a download lists exactly
 * what the dashboard table shows. */
function sortedParticipants(db: Db, f: Filters, scope: Scope) {
  const rows = getParticipantUsage(db, f, scope);
  // Stable: equal minutes keep the report's own order (decision 0014 §10).
  if (f.sort === "minutes") rows.sort((a, b) => b.totalMinutes - a.totalMinutes);
  if (f.order === "asc") rows.reverse();
  return rows;
}

/** Each uid once, across the apps it is used in: the per-app rows summed, in the same order rules (sort=minutes, order=asc). */
function combinedParticipants(db: Db, f: Filters, scope: Scope): CombinedParticipantRow[] {
  const byUid = new Map<string, CombinedParticipantRow>();
  const minOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  const maxOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
  for (const r of getParticipantUsage(db, f, scope)) {
    const c = byUid.get(r.uid);
    if (!c) {
      byUid.set(r.uid, { uid: r.uid, apps: [r.app], calls: r.calls, joined: r.joined, unanswered: r.unanswered, audioMinutes: r.audioMinutes, videoMinutes: r.videoMinutes, totalMinutes: r.totalMinutes, firstCallAt: r.firstCallAt, lastCallAt: r.lastCallAt });
      continue;
    }
    c.apps.push(r.app);
    c.calls += r.calls;
    c.joined += r.joined;
    c.unanswered += r.unanswered;
    c.audioMinutes = round3(c.audioMinutes + r.audioMinutes);
    c.videoMinutes = round3(c.videoMinutes + r.videoMinutes);
    c.totalMinutes = round3(c.totalMinutes + r.totalMinutes);
    c.firstCallAt = minOf(c.firstCallAt, r.firstCallAt);
    c.lastCallAt = maxOf(c.lastCallAt, r.lastCallAt);
  }
  const rows = [...byUid.values()].map((r) => ({ ...r, apps: r.apps.sort() }));
  const key = f.sort === "minutes" ? (r: CombinedParticipantRow) => r.totalMinutes : (r: CombinedParticipantRow) => r.calls;
  rows.sort((a, b) => key(b) - key(a) || b.calls - a.calls || compareBinary(a.uid, b.uid));
  if (f.order === "asc") rows.reverse();
  return rows;
}

function combinedParticipantsPage(db: Db, f: Filters, scope: Scope) {
  const all = combinedParticipants(db, f, scope);
  return pageOf(all.slice((f.page - 1) * f.perPage, f.page * f.perPage), all.length, f);
}

/** The participants report is paged in JSON (it can hold hundreds of thousands of uids): the page of sortedParticipants' order. */
function participantsPage(db: Db, f: Filters, scope: Scope) {
  const { rows, total } = getParticipantPage(db, f, scope);
  return pageOf(rows, total, f);
}

/** The totals CSV: one row per period. */
function totalsRows(db: Db, f: Filters, scope: Scope): TotalsCsvRow[] {
  const t = getTotals(db, f, scope);
  return [{ period: "current", ...t.current }, ...(t.previous ? [{ period: "previous" as const, ...t.previous }] : [])];
}

/* `offThread`: what the analytics worker computes (worker/host.ts). Every report that
 * scans the in-memory store runs there; recordings (indexed SQLite) and the calls list's
 * CSV rows are read on the request's thread (a worker would have to buffer them) — the
 * calls CSV's order is the worker's (`order`: the pks, sorted from the store, head first). */

export const REPORT_ANSWERERS: { readonly [N in ReportName]: ReportAnswerer<N> } = {
  calls: {
    name: "calls",
    offThread: { json: true, order: true },
    // The platform's recording flag and the links received, per row (recording-status.ts).
    json: (db, f, scope) => withRecordingFacts(db, getCalls(db, f, scope), scope),
    csv: { rows: iterateCalls, raw: { order: callsCsvOrder, rows: callsCsvBatches } },
  },
  participants: { name: "participants", offThread: { json: true, csv: true }, json: participantsPage, csv: { rows: sortedParticipants } },
  "participants-combined": { name: "participants-combined", offThread: { json: true, csv: true }, json: combinedParticipantsPage, csv: { rows: combinedParticipants } },
  apps: { name: "apps", offThread: { json: true, csv: true }, json: listOf(getAppUsage), csv: { rows: getAppUsage } },
  daily: { name: "daily", offThread: { json: true, csv: true }, json: listOf(getDailyUsage), csv: { rows: getDailyUsage } },
  recordings: { name: "recordings", json: getRecordings, csv: { rows: iterateRecordings } },
  breakdowns: { name: "breakdowns", offThread: { json: true, csv: true }, json: listOf(getBreakdowns), csv: { rows: getBreakdowns } },
  durations: { name: "durations", offThread: { json: true, csv: true }, json: listOf(getDurationDistribution), csv: { rows: getDurationDistribution } },
  heatmap: { name: "heatmap", offThread: { json: true, csv: true }, json: listOf(getConcurrencyHeatmap), csv: { rows: getConcurrencyHeatmap } },
  engagement: { name: "engagement", offThread: { json: true, csv: true }, json: listOf(getEngagement), csv: { rows: getEngagement } },
  totals: { name: "totals", offThread: { json: true, csv: true }, json: getTotals, csv: { rows: totalsRows } },
  /* The platform's recording flag next to the links the webhooks delivered: indexed SQLite (reports/recording-status.ts). */
  "recording-summary": {
    name: "recording-summary",
    json: (db, f, scope) => ({ data: getRecordingSummary(db, f, scope) }),
    csv: { rows: (db, f, scope) => [getRecordingSummary(db, f, scope)] },
  },
  "recordings-awaiting": { name: "recordings-awaiting", json: getAwaitingRecordings, csv: { rows: iterateAwaitingRecordings } },
  /* What participants joined with, from the stored join deliveries (SQLite JSON: reports/clients.ts). */
  clients: { name: "clients", json: listOf(getClients), csv: { rows: getClients } },
};
