/**
 * The analytics engine interface: what every engine implements and every caller gets
 * from `analyticsEngine()` (engine.ts, which picks the engine of the process and
 * re-exports these types). Kept apart from engine.ts so that an engine can implement
 * it without importing the module that imports every engine.
 */
import type { Filters } from "./filters";
import type { CallDetail, CallRef } from "./report-types";
import type { CsvSource, ReportJson, ReportName } from "./report-csv-writers";
import type { Scope } from "./scope";

export type EngineKind = "memory" | "clickhouse";

/** What an engine says about itself for /api/health and the logs: never a secret (no URL, no password). */
export interface EngineHealth {
  engine: EngineKind;
  /** `starting`: answering, but still loading (the first reports may be slow). */
  status: "ok" | "starting" | "unavailable";
  /** One line for an operator: what was loaded or reached, or what failed. */
  detail: string;
}

/**
 * Every method takes the filter model (filters.ts) and the caller's scope (its apps):
 * an engine restricts every answer to the scope's apps itself, and answers an app the
 * scope cannot see (or that does not exist) with HttpError 404, as routes send it. A
 * `signal` that aborts means nobody will read the answer: an engine may stop early and
 * reject with an AbortError.
 */
export interface AnalyticsEngine {
  readonly kind: EngineKind;
  /** A report's JSON answer, exactly as its route sends it. */
  report<N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>>;
  /**
   * A report's CSV: every row (no paging) in the report's order, in batches pulled as the
   * client reads (report-registry.ts says each report's kind and columns). Settles once the
   * request is known to be answerable (a 404 rejects here, before the first byte).
   */
  csv<N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<CsvSource<N>>;
  /** One call with its participants and recordings (404 when it does not exist or its app is out of scope). */
  call(ref: CallRef, scope: Scope, signal?: AbortSignal): Promise<CallDetail>;
  /** Gets ready for the first reports (loads a store, checks a schema) without holding up the caller. */
  start(): Promise<void>;
  health(): Promise<EngineHealth>;
  /** Releases what the engine holds (a worker thread, connections). */
  close(): Promise<void>;
}
