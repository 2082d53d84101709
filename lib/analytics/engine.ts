/**
 * The analytics engine interface: the one way into the reports for code that is not a
 * route handler (statements, alerts, pages, scripts). Every answer is asynchronous, so
 * the same caller works whether the report is computed by the embedded in-memory engine
 * (on the analytics worker, or in-process) or by ClickHouse.
 *
 * Today this is a thin façade over `runReport` (worker-host.ts); issue 13 moves each
 * engine behind it. Callers depend on `analyticsEngine().report(name, filters, scope)`
 * and the report's JSON type, never on an engine's internals.
 */
import type { Filters } from "./filters";
import type { Scope } from "./query";
import type { ReportName, REPORTS } from "./reports";
import { runReport } from "./worker-host";

/** A report's JSON answer, exactly as its route sends it. */
export type ReportJson<N extends ReportName> = ReturnType<(typeof REPORTS)[N]["json"]>;

export interface AnalyticsEngine {
  /** Which engine answers: the embedded in-memory store over SQLite, or ClickHouse. */
  readonly kind: "memory" | "clickhouse";
  /** A report's JSON answer under the filter model, restricted to the scope's apps. */
  report<N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>>;
}

const memoryEngine: AnalyticsEngine = {
  kind: "memory",
  report: (name, f, scope, signal) => runReport(name, f, scope, signal),
};

/** The engine this process answers reports with. */
export function analyticsEngine(): AnalyticsEngine {
  return memoryEngine;
}
