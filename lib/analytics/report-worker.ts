/**
 * The analytics worker thread (started by worker-host.ts): its own read-only connection
 * to the warehouse file, its own in-memory store kept current from `analytics_changes`
 * exactly as on the main thread (every report calls `analyticsStore` first), and the
 * same report table the routes use. One job at a time, in the order the host sends them.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import type { Filters } from "./filters";
import type { Scope } from "./query";
import { storeRows } from "./calls-csv";
import type { RowOrder } from "./report-route";
import { REPORTS, type ReportName } from "./reports";
import { analyticsStore } from "./store";

export type WorkerJob =
  | { id: number; kind: "warm" }
  | { id: number; kind: "json" | "rows" | "order"; name: ReportName; filters: Filters; scope: Scope }
  /** The calls CSV's store values of a batch of pks (calls-csv.ts). */
  | { id: number; kind: "values"; pks: RowOrder };

export interface WorkerReply {
  id: number;
  /** Milliseconds the job took in the worker. */
  ms: number;
  result?: unknown;
  error?: { name: string; message: string; status?: number; code?: string; details?: Record<string, unknown> };
}

const { file } = workerData as { file: string };
const db = openDatabase(file, { readonly: true, migrate: false });

function run(job: WorkerJob): unknown {
  if (job.kind === "warm") return { calls: analyticsStore(db).n };
  if (job.kind === "values") return storeRows(db, job.pks);
  const report = REPORTS[job.name];
  if (job.kind === "json") return report.json(db, job.filters, job.scope);
  if (job.kind === "order") {
    const order = "raw" in report.csv ? report.csv.raw?.order : undefined;
    if (!order) throw new Error(`report ${job.name} has no CSV order`);
    return order(db, job.filters, job.scope);
  }
  return Array.from(report.csv.rows(db, job.filters, job.scope) as Iterable<unknown>);
}

parentPort?.on("message", (job: WorkerJob) => {
  const t0 = performance.now();
  try {
    const result = run(job);
    // A typed array (the calls CSV's order, store values) is moved, not copied.
    const array = ArrayBuffer.isView(result) ? result : job.kind === "values" ? (result as ReturnType<typeof storeRows>).v : undefined;
    const transfer = array && array.buffer instanceof ArrayBuffer ? [array.buffer] : [];
    parentPort?.postMessage({ id: job.id, ms: performance.now() - t0, result } satisfies WorkerReply, transfer);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const http = e as Error & { status?: number; code?: string; details?: Record<string, unknown> };
    const error = { name: e.name, message: e.message, status: typeof http.status === "number" ? http.status : undefined, code: typeof http.code === "string" ? http.code : undefined, details: http.details };
    parentPort?.postMessage({ id: job.id, ms: performance.now() - t0, error } satisfies WorkerReply);
  }
});
