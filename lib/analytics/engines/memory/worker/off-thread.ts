import type { Filters } from "../../../filters";
import type { ReportJson, ReportName, ReportRow } from "../../../report-csv-writers";
import type { Scope } from "../../../scope";
import type { HeadFirstOrder, ReportAnswerer, StoreValuesOf } from "../report-answerer";
import { analyticsWorker, storeValuesOffThread } from "./host";

/**
 * Where a memory-engine report may run off the request's thread: each method answers
 * from the analytics worker, or undefined where the report must run in-process (no
 * worker, or a report the worker does not take: report.offThread says which).
 */
export interface OffThread {
  json<N extends ReportName>(report: ReportAnswerer<N>, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>> | undefined;
  rows<N extends ReportName>(report: ReportAnswerer<N>, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportRow<N>[]> | undefined;
  /** The calls CSV's order, head first. */
  order<N extends ReportName>(report: ReportAnswerer<N>, f: Filters, scope: Scope, signal?: AbortSignal): Promise<HeadFirstOrder> | undefined;
  /** With an order from off the thread: where the raw rows get the store's values of a batch (undefined: rows read whole). */
  storeValues(signal?: AbortSignal): StoreValuesOf | undefined;
}

/** The worker this process registered, if it runs (worker/host.ts). */
export const processWorker: OffThread = {
  json: (report, f, scope, signal) => (report.offThread?.json ? analyticsWorker()?.run(report.name, "json", f, scope, signal) : undefined),
  rows: (report, f, scope, signal) => (report.offThread?.csv ? analyticsWorker()?.run(report.name, "rows", f, scope, signal) : undefined),
  order: (report, f, scope, signal) => (report.offThread?.order ? analyticsWorker()?.run(report.name, "order", f, scope, signal) : undefined),
  storeValues: storeValuesOffThread,
};

/** Every report in-process (tests, scripts, ANALYTICS_WORKER=off with no worker started). */
export const inProcess: OffThread = {
  json: () => undefined,
  rows: () => undefined,
  order: () => undefined,
  storeValues: () => undefined,
};
