/**
 * The analytics engine of this process: the one way into the reports. Route handlers
 * (report-handler.ts, call-handler.ts), the dashboard's pages, statements, alerts and scripts ask the
 * engine of this process for a report by name (the table in report-registry.ts) and get its
 * JSON, its CSV batches or one call's detail — never a store, a worker or SQL.
 *
 * Every answer is asynchronous, so one caller works whichever engine answers: the
 * embedded in-memory engine over SQLite (lib/analytics/engines/memory/: a scan on its
 * worker thread, or in-process) or ClickHouse (lib/analytics/engines/clickhouse/: a query
 * over HTTP), both implementing engine-interface.ts. Which engine serves is chosen once
 * per process (`analyticsEngine`).
 * docs/decisions/0010-analytics-engine-interface.md says why and what each engine owns.
 */
import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { env } from "@/lib/config/env";
import { timeReport } from "@/lib/metrics/registry";
import { createClickHouseEngine } from "./engines/clickhouse";
import { createMemoryEngine } from "./engines/memory";
import type { AnalyticsEngine, EngineKind } from "./engine-interface";

export type { AnalyticsEngine, EngineHealth, EngineKind } from "./engine-interface";
export type { CsvBatch, CsvSource, ReportJson, ReportName, ReportRow } from "./report-csv-writers";

/** What an engine is built from: the warehouse (apps, scopes, and the memory engine's facts) and the environment. */
export interface EngineContext {
  db: () => Db;
  env: ReturnType<typeof env>;
}

export type EngineFactory = (ctx: EngineContext) => AnalyticsEngine;

/**
 * The engines this build can run, by kind. An engine registers by adding its factory
 * here; `CLICKHOUSE_URL` selects the ClickHouse engine, anything else the memory engine.
 */
const FACTORIES: EngineFactories = {
  memory: (ctx) => createMemoryEngine({ db: ctx.db, worker: ctx.env.ANALYTICS_WORKER === "on" }),
  clickhouse: (ctx) => createClickHouseEngine({ db: ctx.db }),
};

/** The kind of engine an environment asks for. */
export function engineKind(e: Pick<EngineContext["env"], "CLICKHOUSE_URL">): EngineKind {
  return e.CLICKHOUSE_URL ? "clickhouse" : "memory";
}

export class EngineUnavailableError extends Error {
  constructor(kind: EngineKind) {
    super(`CLICKHOUSE_URL asks for the ${kind} engine, but this build has none: unset CLICKHOUSE_URL to use the embedded engine`);
    this.name = "EngineUnavailableError";
  }
}

export type EngineFactories = { readonly [K in EngineKind]?: EngineFactory };

/** Builds the engine an environment asks for (from this build's engines, or those given: tests). */
export function createEngine(ctx: EngineContext, factories: EngineFactories = FACTORIES): AnalyticsEngine {
  const kind = engineKind(ctx.env);
  const factory = factories[kind];
  if (!factory) throw new EngineUnavailableError(kind);
  return factory(ctx);
}

// Once per process: Next's bundle and the server's own modules are two copies of this
// module, and must share one engine (one worker, one connection pool).
const globalForEngine = globalThis as unknown as { callboardAnalyticsEngine?: AnalyticsEngine };

/** The engine this process answers reports with (built on first use), its answers timed for /metrics. */
export function analyticsEngine(): AnalyticsEngine {
  globalForEngine.callboardAnalyticsEngine ??= withReportTimings(createEngine({ db: warehouse, env: env() }));
  return globalForEngine.callboardAnalyticsEngine;
}

/** Every report and CSV the engine answers, timed by report name (a closed set) into `callboard_report_duration_seconds`. */
export function withReportTimings(engine: AnalyticsEngine): AnalyticsEngine {
  const report = engine.report.bind(engine);
  const csv = engine.csv.bind(engine);
  // The engine object itself keeps answering (its other methods and state stay as they are).
  return Object.assign(engine, {
    report: ((name, f, scope, signal) => timeReport({ report: name, engine: engine.kind, format: "json" }, () => report(name, f, scope, signal))) as AnalyticsEngine["report"],
    csv: ((name, f, scope, signal) => timeReport({ report: name, engine: engine.kind, format: "csv" }, () => csv(name, f, scope, signal))) as AnalyticsEngine["csv"],
  });
}
