import type { Db } from "@/db/client";
import { logger } from "@/lib/log/logger";
import type { AnalyticsEngine, EngineHealth } from "../../engine-interface";
import type { Filters } from "../../filters";
import type { CsvSource, ReportName, ReportRow } from "../../report-csv-writers";
import type { Scope } from "../../scope";
import { getCall } from "./reports/calls";
import { processWorker, type OffThread } from "./worker/off-thread";
import { REPORT_ANSWERERS } from "./report-answerers";
import { analyticsStore, loadedStore } from "./store/load";
import { storeBytes } from "./store/store";
import { analyticsWorker, startAnalyticsWorker, type AnalyticsWorker } from "./worker/host";

/**
 * The embedded engine: every report from the in-memory store over the SQLite warehouse
 * (store/, kept current from its change log), computed on the analytics worker thread
 * when one runs (worker/host.ts) and in-process otherwise; call detail and recordings
 * read SQLite directly. docs/decisions/0006 (the store) and 0010 (the interface).
 */
export interface MemoryEngineOptions {
  db: () => Db;
  /** `start()` starts the analytics worker thread (ANALYTICS_WORKER=on); otherwise the store loads in-process. */
  worker?: boolean;
  /** Where reports run off this thread (default: the process's worker, whoever started it). */
  offThread?: OffThread;
}

/** Rows per CSV batch of a report computed in-process (csvStream writes 512 at a time too). */
const BATCH = 512;

/** A plain row source in batches, pulled lazily (a SQLite statement's iterator is released when the writer stops). */
function* batchesOf<Row>(rows: Iterable<Row>): Generator<Row[]> {
  let batch: Row[] = [];
  for (const r of rows) {
    batch.push(r);
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** What the store holds once loaded: its calls, and (in-process) its arrays' bytes or (worker) the sort scratch reserved beside it. */
export interface StoreInfo {
  calls: number;
  bytes?: number;
  scratchMb?: number;
}

/** The memory engine: the interface, and when its store is loaded (the bench, the server's logs). */
export interface MemoryEngine extends AnalyticsEngine {
  /** Settles once the store is loaded: on the worker `start()` began, else here (loading it now). Undefined: the worker failed. */
  ready(): Promise<StoreInfo | undefined>;
}

type CsvOf = <N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal) => Promise<CsvSource<N>>;

export function createMemoryEngine(opts: MemoryEngineOptions): MemoryEngine {
  const offThread = opts.offThread ?? processWorker;
  let started: AnalyticsWorker | undefined;

  /** A bounded report's CSV rows: from the worker where it takes the report, else computed here. */
  const rowsCsv = async <N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Iterable<ReportRow<N>[]>> => {
    const report = REPORT_ANSWERERS[name];
    const pending = offThread.rows(report, f, scope, signal);
    return pending ? [await pending] : batchesOf(report.csv.rows(opts.db(), f, scope));
  };

  /**
   * The calls CSV: its order comes from the store's thread (the worker) when there is
   * one, head first — the response starts with the head's rows while the worker sorts
   * the rest; the rows are read here, batch by batch, as the client reads, with the
   * store's values of each batch from the worker too. In-process, all of it here.
   */
  const callsCsv = async (f: Filters, scope: Scope, signal?: AbortSignal): Promise<CsvSource<"calls">> => {
    const report = REPORT_ANSWERERS.calls;
    const pendingOrder = offThread.order(report, f, scope, signal);
    const order = pendingOrder ? await pendingOrder : undefined;
    const values = order ? offThread.storeValues(signal) : undefined;
    return report.csv.raw!.rows(opts.db(), f, scope, order, values);
  };

  const CSV: { readonly [N in ReportName]: (f: Filters, scope: Scope, signal?: AbortSignal) => Promise<CsvSource<N>> } = {
    calls: callsCsv,
    participants: (f, scope, signal) => rowsCsv("participants", f, scope, signal),
    "participants-combined": (f, scope, signal) => rowsCsv("participants-combined", f, scope, signal),
    apps: (f, scope, signal) => rowsCsv("apps", f, scope, signal),
    daily: (f, scope, signal) => rowsCsv("daily", f, scope, signal),
    recordings: (f, scope, signal) => rowsCsv("recordings", f, scope, signal),
    breakdowns: (f, scope, signal) => rowsCsv("breakdowns", f, scope, signal),
    durations: (f, scope, signal) => rowsCsv("durations", f, scope, signal),
    heatmap: (f, scope, signal) => rowsCsv("heatmap", f, scope, signal),
    engagement: (f, scope, signal) => rowsCsv("engagement", f, scope, signal),
    totals: (f, scope, signal) => rowsCsv("totals", f, scope, signal),
    "recording-summary": (f, scope, signal) => rowsCsv("recording-summary", f, scope, signal),
    "recordings-awaiting": (f, scope, signal) => rowsCsv("recordings-awaiting", f, scope, signal),
    clients: (f, scope, signal) => rowsCsv("clients", f, scope, signal),
  };
  const csv: CsvOf = (name, f, scope, signal) => CSV[name](f, scope, signal);

  const loadHere = (): StoreInfo => {
    const s = analyticsStore(opts.db());
    return { calls: s.n, bytes: storeBytes(s) };
  };

  return {
    kind: "memory",
    async report(name, f, scope, signal) {
      const report = REPORT_ANSWERERS[name];
      const pending = offThread.json(report, f, scope, signal);
      return pending ? await pending : report.json(opts.db(), f, scope);
    },
    csv,
    async call(ref, scope) {
      return getCall(opts.db(), ref, scope);
    },
    async start() {
      // The store loads now, not in the first report: on the analytics worker (which then
      // runs every store report off the event loop), or — worker switched off or
      // unavailable — in-process right after this tick (blocking the loop while it loads).
      if (opts.worker) started = startAnalyticsWorker(opts.db());
      if (started) return;
      setImmediate(() => {
        const t0 = performance.now();
        try {
          const { calls } = loadHere();
          logger.info({ calls, ms: Math.round(performance.now() - t0) }, "analytics store loaded (in-process)");
        } catch (err) {
          logger.error({ err }, "analytics store warm-up failed");
        }
      });
    },
    async ready() {
      const worker = started ?? analyticsWorker();
      return worker ? worker.warm : loadHere();
    },
    async health(): Promise<EngineHealth> {
      const worker = analyticsWorker();
      if (worker) {
        const warm = await Promise.race([worker.warm, Promise.resolve(null)]);
        return warm
          ? { engine: "memory", status: "ok", detail: `store on the analytics worker: ${warm.calls} calls` }
          : { engine: "memory", status: "starting", detail: "the analytics worker is loading its store" };
      }
      // Never loads the store here: a health check must answer at once.
      const s = loadedStore(opts.db());
      return s
        ? { engine: "memory", status: "ok", detail: `store in-process: ${s.n} calls, ${Math.round(storeBytes(s) / 1e6)} MB` }
        : { engine: "memory", status: "starting", detail: "the store loads in-process with the first report" };
    },
    async close() {
      await started?.close();
      started = undefined;
    },
  };
}


