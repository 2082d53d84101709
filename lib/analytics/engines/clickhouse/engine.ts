import type { Filters, Scope } from "@/lib/analytics";
import type { ReportJson } from "@/lib/analytics/engine";
import type { ReportName } from "@/lib/analytics/reports";
import type { Db } from "@/db/client";
import { clickhouse, ensureClickHouseSchema, type ClickHouse } from "@/lib/clickhouse";
import type { ChContext } from "./context";
import { callsCsvBatches, getCall, getCalls } from "./reports/calls";
import { getConcurrencyHeatmap } from "./reports/heatmap";
import { getBreakdowns, getDurationDistribution, getEngagement, getTotals } from "./reports/insights";
import { getRecordings, recordingBatches } from "./reports/recordings";
import { getAppUsage, getDailyUsage, getParticipantsPage, participantRows } from "./reports/usage";

/**
 * The ClickHouse engine: every report of the table of reports answered by queries over
 * the ClickHouse warehouse (apps and scopes from SQLite), with the in-memory engine's
 * answers (the parity suite holds them to it).
 */

type Run<T> = (ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal) => Promise<T>;
const list = <T>(fn: Run<T[]>): Run<{ data: T[] }> => async (ctx, f, scope, signal) => ({ data: await fn(ctx, f, scope, signal) });

const JSON_REPORTS: { [N in ReportName]: Run<ReportJson<N>> } = {
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
};

/**
 * A report's CSV rows in batches: objects keyed as the CSV's columns, or (the calls list)
 * arrays in column order. Bounded reports (a few hundred rows at most) come as one batch
 * computed before the answer starts; the long ones stream from ClickHouse.
 */
export type CsvBatches = Iterable<ReadonlyArray<object>> | AsyncIterable<ReadonlyArray<object>> | AsyncIterable<unknown[][]>;

/** The one batch of a bounded report. */
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

type CsvRun = (ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal) => CsvBatches | Promise<CsvBatches>;

const CSV_REPORTS: { [N in ReportName]: CsvRun } = {
  calls: callsCsvBatches,
  participants: (ctx, f, scope, signal) => batched(participantRows(ctx, f, scope, signal)),
  apps: (ctx, f, scope, signal) => once(getAppUsage(ctx, f, scope, signal)),
  daily: (ctx, f, scope, signal) => once(getDailyUsage(ctx, f, scope, signal)),
  recordings: recordingBatches,
  breakdowns: (ctx, f, scope, signal) => once(getBreakdowns(ctx, f, scope, signal)),
  durations: (ctx, f, scope, signal) => once(getDurationDistribution(ctx, f, scope, signal)),
  heatmap: (ctx, f, scope, signal) => once(getConcurrencyHeatmap(ctx, f, scope, signal)),
  engagement: (ctx, f, scope, signal) => once(getEngagement(ctx, f, scope, signal)),
  totals: (ctx, f, scope, signal) =>
    once(
      getTotals(ctx, f, scope, signal).then((t) => [{ period: "current", ...t.current }, ...(t.previous ? [{ period: "previous", ...t.previous }] : [])]),
    ),
};

export interface ClickHouseEngineOptions {
  /** The SQLite warehouse: apps, who may see which. */
  db: () => Db;
  /** The ClickHouse holding the facts (default: the process's, from CLICKHOUSE_URL). */
  ch?: ClickHouse;
}

/** What the engine says for /api/health and the logs (never the password). */
export interface ClickHouseEngineHealth {
  engine: "clickhouse";
  status: "ok" | "unavailable";
  detail: string;
}

export function createClickHouseEngine(options: ClickHouseEngineOptions) {
  const ctx: ChContext = { db: options.db, ch: options.ch ?? clickhouse() };
  return {
    kind: "clickhouse" as const,
    /** Migrates the schema in the background (a ClickHouse down at start is retried by the first report). */
    async start(): Promise<void> {
      void ensureClickHouseSchema().catch(() => undefined);
    },
    async health(): Promise<ClickHouseEngineHealth> {
      try {
        const [row] = await ctx.ch.rows<{ v: string }>("SELECT version() AS v");
        return { engine: "clickhouse", status: "ok", detail: `ClickHouse ${row?.v ?? "?"} at ${ctx.ch.label}` };
      } catch (err) {
        return { engine: "clickhouse", status: "unavailable", detail: err instanceof Error ? err.message : String(err) };
      }
    },
    async close(): Promise<void> {
      if (!options.ch) return; // the process's client is closed with the process (closeClickHouse)
    },
    async report<N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>> {
      await ensureClickHouseSchema();
      return (JSON_REPORTS[name] as Run<ReportJson<N>>)(ctx, f, scope, signal);
    },
    /** The CSV's batches; apps are resolved (a 404 thrown) before it returns. */
    async csv(name: ReportName, f: Filters, scope: Scope, signal?: AbortSignal): Promise<CsvBatches> {
      await ensureClickHouseSchema();
      return await CSV_REPORTS[name](ctx, f, scope, signal);
    },
    async call(ref: { app: string; sessionId: string }, scope: Scope, signal?: AbortSignal) {
      await ensureClickHouseSchema();
      return getCall(ctx, ref, scope, signal);
    },
  };
}
