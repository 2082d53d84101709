/**
 * The analytics worker thread (started by host.ts): its own read-only connection
 * to the warehouse file, its own in-memory store kept current from `analytics_changes`
 * exactly as on the main thread (every report calls `analyticsStore` first), and the
 * same report table the in-process engine uses. One job at a time, in the order the
 * host sends them; the messages are typed in worker/protocol.ts.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import type { Filters } from "../../../filters";
import { MAX_CROSSINGS } from "../../../report-types";
import type { ReportName, ReportRow } from "../../../report-csv-writers";
import type { Scope } from "../../../scope";
import { CSV_MMAP_BYTES, callsCsvLines, storeRows } from "../reports/calls-csv";
import { reserveSortScratch } from "../scan/order";
import { REPORT_ANSWERERS } from "../report-answerers";
import { prebuildBlockSums } from "../scan/prebuild";
import { reserveKeyedScratch } from "../scan/selection";
import { analyticsStore } from "../store/load";
import type { JobAnswers, JobKind, WorkerError, WorkerJob, WorkerReply } from "./protocol";

const { file } = workerData as { file: string };
const db = openDatabase(file, { readonly: true, migrate: false });
// Memory-mapped reads: the calls CSV's `lines` jobs read their rows through the map (calls-csv.ts CSV_MMAP_BYTES).
db.$client.pragma(`mmap_size = ${CSV_MMAP_BYTES}`);

/** Typed arrays are moved to the host, not copied (the calls CSV's order, store values). */
function transferable(...arrays: ArrayBufferView[]): ArrayBuffer[] {
  return arrays.flatMap((a) => (a.buffer instanceof ArrayBuffer ? [a.buffer] : []));
}

/** The typed arrays of an answer (an order, lines, store values), moved rather than copied. */
function arraysOf(job: WorkerJob, result: JobAnswers[JobKind]): ArrayBufferView[] {
  if (ArrayBuffer.isView(result)) return [result];
  return job.kind === "values" && "v" in result ? [result.v] : [];
}

function run(job: WorkerJob, t0: number): JobAnswers[JobKind] {
  switch (job.kind) {
    case "warm": {
      // The store, its block sums, and the scratch of the calls list's sorts (28 bytes a
      // call): the first reports after a start answer as fast as the next, the server's
      // memory is known once the store is loaded, and the first CSV export or page by
      // minutes does not grow it (docs/decisions/0006-analytics-rollups.md §11–12).
      const n = analyticsStore(db).n;
      const t1 = performance.now();
      prebuildBlockSums(db, MAX_CROSSINGS);
      return { calls: n, scratchBytes: reserveKeyedScratch(n) + reserveSortScratch(n), sumsMs: Math.round(performance.now() - t1) };
    }
    case "values":
      return storeRows(db, job.pks);
    case "lines":
      return callsCsvLines(db, job.pks, job.apps, job.tz, job.into);
    case "json":
      return REPORT_ANSWERERS[job.name].json(db, job.filters, job.scope);
    case "rows":
      return rowsOf(job.name, job.filters, job.scope);
    case "order": {
      const order = REPORT_ANSWERERS[job.name].csv.raw?.order;
      if (!order) throw new Error(`report ${job.name} has no CSV order`);
      // Head first: the first batch's pks and store values go at once (the request's thread
      // writes those rows while this one sorts the rest), the whole order when it is sorted.
      const { head, values, all } = order(db, job.filters, job.scope);
      post({ id: job.id, ms: performance.now() - t0, part: true, result: { head, values } }, transferable(head, values.v));
      return all();
    }
  }
}

/** A report's CSV rows, all of them (the bounded reports the host sends here). */
function rowsOf<N extends ReportName>(name: N, f: Filters, scope: Scope): ReportRow<N>[] {
  return Array.from(REPORT_ANSWERERS[name].csv.rows(db, f, scope));
}

function post(reply: WorkerReply, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(reply, transfer);
}

function errorOf(err: unknown): WorkerError {
  const e = err instanceof Error ? err : new Error(String(err));
  // An HttpError's status, code and details travel with it (the host rebuilds it).
  const status = "status" in e && typeof e.status === "number" ? e.status : undefined;
  const code = "code" in e && typeof e.code === "string" ? e.code : undefined;
  const details = "details" in e && e.details !== null && typeof e.details === "object" ? { ...e.details } : undefined;
  return { name: e.name, message: e.message, status, code, details };
}

parentPort?.on("message", (job: WorkerJob) => {
  const t0 = performance.now();
  try {
    const result = run(job, t0);
    post({ id: job.id, ms: performance.now() - t0, result }, transferable(...arraysOf(job, result)));
  } catch (err) {
    post({ id: job.id, ms: performance.now() - t0, error: errorOf(err) });
  }
});
