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
import { callsCsvLines, storeRows } from "./calls-csv";
import type { RowOrder } from "./report-route";
import { REPORTS, type ReportName } from "./reports";
import { reserveSortScratch } from "./order";
import { MAX_CROSSINGS } from "./insights";
import { prebuildBlockSums, reserveKeyedScratch } from "./scan";
import { analyticsStore } from "./store";

export type WorkerJob =
  | { id: number; kind: "warm" }
  | { id: number; kind: "json" | "rows" | "order"; name: ReportName; filters: Filters; scope: Scope }
  /** The calls CSV's store values of a batch of pks (calls-csv.ts). */
  | { id: number; kind: "values"; pks: RowOrder }
  /** The calls CSV's lines of a batch of pks, as UTF-8 (calls-csv.ts), for the apps given (pk, app id). */
  | { id: number; kind: "lines"; pks: RowOrder; apps: Array<[number, string]> };

export interface WorkerReply {
  id: number;
  /** Milliseconds the job took in the worker (so far, for a part). */
  ms: number;
  /**
   * A first answer; the job goes on and sends its last answer later (the `order` job:
   * the calls CSV's head, then the whole order).
   */
  part?: boolean;
  result?: unknown;
  error?: { name: string; message: string; status?: number; code?: string; details?: Record<string, unknown> };
}

const { file } = workerData as { file: string };
const db = openDatabase(file, { readonly: true, migrate: false });

/** Typed arrays are moved to the host, not copied (the calls CSV's order, store values). */
function transferable(...arrays: ArrayBufferView[]): ArrayBuffer[] {
  return arrays.flatMap((a) => (a.buffer instanceof ArrayBuffer ? [a.buffer] : []));
}

function run(job: WorkerJob, t0: number): unknown {
  if (job.kind === "warm") {
    // The store, its block sums, and the scratch of the calls list's sorts (28 bytes a
    // call): the first reports after a start answer as fast as the next, the server's
    // memory is known once the store is loaded, and the first CSV export or page by
    // minutes does not grow it (docs/decisions/0006-analytics-rollups.md §11–12).
    const n = analyticsStore(db).n;
    const t1 = performance.now();
    prebuildBlockSums(db, MAX_CROSSINGS);
    return { calls: n, scratchBytes: reserveKeyedScratch(n) + reserveSortScratch(n), sumsMs: Math.round(performance.now() - t1) };
  }
  if (job.kind === "values") return storeRows(db, job.pks);
  if (job.kind === "lines") return callsCsvLines(db, job.pks, job.apps);
  const report = REPORTS[job.name];
  if (job.kind === "json") return report.json(db, job.filters, job.scope);
  if (job.kind === "order") {
    const order = "raw" in report.csv ? report.csv.raw?.order : undefined;
    if (!order) throw new Error(`report ${job.name} has no CSV order`);
    // Head first: the first batch's pks and store values go at once (the request's thread
    // writes those rows while this one sorts the rest), the whole order when it is sorted.
    const { head, values, all } = order(db, job.filters, job.scope);
    parentPort?.postMessage({ id: job.id, ms: performance.now() - t0, part: true, result: { head, values } } satisfies WorkerReply, transferable(head, values.v));
    return all();
  }
  return Array.from(report.csv.rows(db, job.filters, job.scope) as Iterable<unknown>);
}

parentPort?.on("message", (job: WorkerJob) => {
  const t0 = performance.now();
  try {
    const result = run(job, t0);
    const array = ArrayBuffer.isView(result) ? result : job.kind === "values" ? (result as ReturnType<typeof storeRows>).v : undefined;
    parentPort?.postMessage({ id: job.id, ms: performance.now() - t0, result } satisfies WorkerReply, array ? transferable(array) : []);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const http = e as Error & { status?: number; code?: string; details?: Record<string, unknown> };
    const error = { name: e.name, message: e.message, status: typeof http.status === "number" ? http.status : undefined, code: typeof http.code === "string" ? http.code : undefined, details: http.details };
    parentPort?.postMessage({ id: job.id, ms: performance.now() - t0, error } satisfies WorkerReply);
  }
});
