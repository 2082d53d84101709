import type { Db } from "@/db/client";
import { clickhouse, ensureClickHouseSchema, qualified, type ClickHouse } from "@/lib/clickhouse";
import type { AnalyticsEngine, EngineHealth } from "../../engine-interface";
import type { Filters } from "../../filters";
import type { CallDetail, CallRef } from "../../report-types";
import type { CsvBatch, CsvSource, ReportJson, ReportName } from "../../report-csv-writers";
import type { Scope } from "../../scope";
import { withApps, type ChContext } from "./context";
import { unavailableAsHttp } from "./errors";
import { callsCsvBatches, getCall, getCalls } from "./reports/calls";
import { getConcurrencyHeatmap } from "./reports/heatmap";
import { getBreakdowns, getDurationDistribution, getEngagement, getTotals } from "./reports/insights";
import { getRecordings, recordingBatches } from "./reports/recordings";
import { getClients } from "./reports/clients";
import { combinedParticipantRows, getCombinedParticipantsPage } from "./reports/participants-combined";
import { awaitingRecordingRows, getAwaitingRecordings, getRecordingSummary } from "./reports/recording-status";
import { getAppUsage, getDailyUsage, getParticipantsPage, participantsCsvBatches } from "./reports/usage";

/**
 * The ClickHouse engine: every report of the table of reports answered by queries over
 * the ClickHouse warehouse (apps and scopes from SQLite), with the in-memory engine's
 * answers (the parity suite holds them to it). docs/decisions/0014-clickhouse-warehouse.md; the call facts
 * are read from schema v2's signed rows (docs/decisions/0034-clickhouse-schema-v2.md, conditions.ts).
 */

type Run<T> = (ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal) => Promise<T>;
const list = <T>(fn: Run<T[]>): Run<{ data: T[] }> => async (ctx, f, scope, signal) => ({ data: await fn(ctx, f, scope, signal) });

const JSON_REPORTS: { readonly [N in ReportName]: Run<ReportJson<N>> } = {
  calls: getCalls,
  participants: getParticipantsPage,
  apps: list(getAppUsage),
  daily: list(getDailyUsage),
  recordings: getRecordings,
  breakdowns: list(getBreakdowns),
  durations: list(getDurationDistribution),
  heatmap: list(getConcurrencyHeatmap),
  engagement: list(getEngagement),
  totals: getTotals,
  "participants-combined": getCombinedParticipantsPage,
  "recording-summary": async (ctx, f, scope, signal) => ({ data: await getRecordingSummary(ctx, f, scope, signal) }),
  "recordings-awaiting": getAwaitingRecordings,
  clients: list(getClients),
};

/** The one batch of a bounded report (a few hundred rows at most), computed before the answer starts. */
const once = async <T>(rows: Promise<T[]>): Promise<Iterable<T[]>> => [await rows];

/** Batches of a stream of rows. */
async function* batched<T>(rows: AsyncIterable<T>, size = 1000): AsyncIterable<T[]> {
  let batch: T[] = [];
  for await (const r of rows) {
    batch.push(r);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

type CsvRun<N extends ReportName> = (ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal) => CsvSource<N> | Promise<CsvSource<N>>;

/**
 * A report's CSV batches (reports.ts says each one's kind): bounded reports as one batch,
 * the long ones (calls, participants, recordings, awaiting) streamed from ClickHouse as the client
 * reads — the calls and the participants as their lines' bytes, written from RowBinary
 * (reports/row-binary-csv.ts). Apps are resolved, and a 404 thrown, before a source is returned.
 */
const CSV_REPORTS: { readonly [N in ReportName]: CsvRun<N> } = {
  calls: callsCsvBatches,
  participants: participantsCsvBatches,
  apps: (ctx, f, scope, signal) => once(getAppUsage(ctx, f, scope, signal)),
  daily: (ctx, f, scope, signal) => once(getDailyUsage(ctx, f, scope, signal)),
  recordings: recordingBatches,
  breakdowns: (ctx, f, scope, signal) => once(getBreakdowns(ctx, f, scope, signal)),
  durations: (ctx, f, scope, signal) => once(getDurationDistribution(ctx, f, scope, signal)),
  heatmap: (ctx, f, scope, signal) => once(getConcurrencyHeatmap(ctx, f, scope, signal)),
  engagement: (ctx, f, scope, signal) => once(getEngagement(ctx, f, scope, signal)),
  totals: (ctx, f, scope, signal) =>
    once(getTotals(ctx, f, scope, signal).then((t) => [{ period: "current" as const, ...t.current }, ...(t.previous ? [{ period: "previous" as const, ...t.previous }] : [])])),
  "participants-combined": (ctx, f, scope, signal) => batched(combinedParticipantRows(ctx, f, scope, signal)),
  "recording-summary": (ctx, f, scope, signal) => once(getRecordingSummary(ctx, f, scope, signal).then((s) => [s])),
  "recordings-awaiting": (ctx, f, scope, signal) => batched(awaitingRecordingRows(ctx, f, scope, signal)),
  clients: (ctx, f, scope, signal) => once(getClients(ctx, f, scope, signal)),
};

/**
 * A CSV source whose first batch is already fetched: the streamed reports ask ClickHouse
 * only when read, and this makes a ClickHouse that cannot answer (or a query it refuses)
 * an error of `csv()` itself — a 503 or 500 status, not a download cut after its headers.
 * Leaving early (the client went away) releases ClickHouse's stream.
 */
async function started<N extends ReportName>(source: CsvSource<N>): Promise<AsyncIterable<CsvBatch<N>>> {
  const it: Iterator<CsvBatch<N>> | AsyncIterator<CsvBatch<N>> = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  const first = await it.next();
  return (async function* () {
    try {
      for (let r = first; !r.done; r = await it.next()) yield r.value;
    } finally {
      await it.return?.();
    }
  })();
}

export interface ClickHouseEngineOptions {
  /** The state store (SQLite file or Postgres): apps, who may see which. */
  db: () => Db;
  /** The ClickHouse holding the facts (default: the process's, from CLICKHOUSE_URL). */
  ch?: ClickHouse;
}

/** ClickHouse must answer the health read within this, or it counts as unavailable. */
const HEALTH_TIMEOUT_MS = 3_000;

export function createClickHouseEngine(options: ClickHouseEngineOptions): AnalyticsEngine {
  const ctx: ChContext = {
    db: options.db,
    // The process's client unless one is given, looked up at each use (it follows
    // CLICKHOUSE_URL, and building the engine never fails, even before it is set).
    get ch() {
      return options.ch ?? clickhouse();
    },
  };
  /** Every answer first makes sure the schema is there (a ClickHouse down at start is migrated by its first reader). */
  const ready = async <T>(answer: (ctx: ChContext) => Promise<T>): Promise<T> => {
    try {
      await ensureClickHouseSchema();
      return await answer(await withApps(ctx));
    } catch (err) {
      throw unavailableAsHttp(err);
    }
  };
  const csv = <N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<CsvSource<N>> =>
    ready(async (ctx) => {
      const source: CsvSource<N> = await CSV_REPORTS[name](ctx, f, scope, signal);
      return started(source);
    });
  return {
    kind: "clickhouse",
    report: <N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>> =>
      ready((ctx) => JSON_REPORTS[name](ctx, f, scope, signal)),
    csv,
    call: (ref: CallRef, scope: Scope, signal?: AbortSignal): Promise<CallDetail> => ready((ctx) => getCall(ctx, ref, scope, signal)),
    /** Migrates the schema in the background (a ClickHouse down at start is retried by the first report). */
    async start(): Promise<void> {
      void ensureClickHouseSchema().catch(() => undefined);
    },
    /**
     * A real read of the facts (every shard of a cluster answers it), not only a ping;
     * the detail names the server's version, never its address or a password.
     */
    async health(): Promise<EngineHealth> {
      const signal = AbortSignal.timeout(HEALTH_TIMEOUT_MS);
      try {
        const timedOut = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("no answer within 3 s")), { once: true }));
        await Promise.race([ensureClickHouseSchema(), timedOut]);
        await ctx.ch.rows(`SELECT 1 FROM ${qualified(ctx.ch.placement.database, "calls_v2")} LIMIT 1`, signal);
        const [row] = await ctx.ch.rows<{ v: string }>("SELECT version() AS v", signal);
        return { engine: "clickhouse", status: "ok", detail: `ClickHouse ${row?.v ?? "?"} answers` };
      } catch {
        return { engine: "clickhouse", status: "unavailable", detail: "ClickHouse cannot be read" };
      }
    },
    async close(): Promise<void> {
      // The process's client is closed with the process (closeClickHouse); a given one by its owner.
    },
  };
}
