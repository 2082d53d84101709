import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { HttpError } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import type { Filters } from "../../../filters";
import type { ReportJson, ReportName, ReportRow } from "../../../report-csv-writers";
import type { Scope } from "../../../scope";
import type { HeadFirstOrder, ReportAnswerer, RowOrder, StoreRows, StoreValuesOf } from "../report-answerer";
import { REPORT_ANSWERERS } from "../report-answerers";
import type { JobAnswers, JobKind, JobMessage, OrderPart, WorkerError, WorkerReply } from "./protocol";
import { spareBuffer } from "@/lib/export/csv-bytes";

/**
 * The analytics worker, host side: one worker thread owns the in-memory store and runs
 * the reports, so a scan (hundreds of ms at 10M calls) never blocks the server's event
 * loop; see docs/decisions/0006-analytics-rollups.md ("Worker").
 *
 * The memory engine (engine.ts) starts it after the server listens and registers it on
 * `globalThis`, where every copy of this module (the server's, Next's bundle) finds it.
 * Where no worker is registered (tests, scripts, a server on an in-memory database,
 * bundled code that cannot start a TypeScript worker) every report runs in-process,
 * synchronously, as before. Jobs run one at a time in arrival order (the calls CSV's
 * batch jobs are posted a few at a time, see `mayPost`); identical jobs
 * waiting in the queue share one run; a job whose request went away before it started
 * is dropped. The calls CSV's `order` job answers twice: its head (the first rows' pks
 * and store values), then the whole order, so the CSV's first rows are written while
 * the worker still sorts. Jobs and answers are typed in worker/protocol.ts.
 */

/** A report job's answer as the host hands it on (the order: head first). */
export interface ReportAnswers<N extends ReportName> {
  json: ReportJson<N>;
  rows: ReportRow<N>[];
  order: HeadFirstOrder;
}

export type ReportJobKind = keyof ReportAnswers<ReportName>;

type Answer = JobAnswers[JobKind];

interface Waiter<T> {
  // Methods (not function properties): a waiter of one job's answer is kept among
  // waiters of any answer, its job's id being what pairs it with its answer.
  resolve(value: T): void;
  reject(e: Error): void;
  /** A job's first answer, ahead of its last (the `order` job's head). */
  part?(v: OrderPart): void;
  signal?: AbortSignal;
}

interface Queued {
  id: number;
  key: string;
  job: JobMessage<JobKind>;
  waiters: Array<Waiter<Answer | undefined>>;
  /** The job's in-process equivalent, if the worker dies before answering (undefined: it has none). */
  fallback: () => Answer | undefined;
  /** A part of the answer went out: the rest can only come from the same run (no fallback). */
  parted?: boolean;
}

export interface AnalyticsWorker {
  /** Settles when the worker's store is loaded (or the worker failed: in-process from then on). */
  readonly warm: Promise<{ calls: number; ms: number; scratchMb: number } | undefined>;
  /**
   * A report's JSON (`json`), CSV rows (`rows`), or the calls CSV's order (`order`): a
   * HeadFirstOrder, resolved as soon as the worker has the head; its `all` settles with
   * the job (the whole order), and rejects if the request goes away first.
   */
  run<N extends ReportName, K extends ReportJobKind>(name: N, job: K, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportAnswers<N>[K]>;
  /** The calls CSV's store values of a batch of pks (calls-csv.ts); undefined if the worker cannot give them (the rows are then read whole). */
  values(pks: RowOrder, signal?: AbortSignal): Promise<StoreRows | undefined>;
  /** The calls CSV's lines of a batch of pks, written by the worker (UTF-8); undefined if it cannot (the caller writes them). */
  lines(pks: RowOrder, apps: Array<[number, string]>, tz: string, signal?: AbortSignal): Promise<Uint8Array | undefined>;
  /** Worker-side duration (ms) of the last finished job, and of all jobs so far: logs and the tests. */
  readonly lastMs: number;
  readonly busyMs: number;
  readonly alive: boolean;
  close(): Promise<void>;
}

/** The calls CSV's batch jobs the worker may hold at once (see `mayPost`). */
const BATCHES_POSTED = 4;

const isBatchJob = (q: { job: { kind: JobKind } }): boolean => q.job.kind === "lines" || q.job.kind === "values";

const globalForWorker = globalThis as unknown as { callboardAnalyticsWorker?: AnalyticsWorker };

/** The running worker of this process, if one was started. */
export function analyticsWorker(): AnalyticsWorker | undefined {
  const w = globalForWorker.callboardAnalyticsWorker;
  return w?.alive ? w : undefined;
}

function workerScript(): string | undefined {
  // Built from the module's own folder (not `new URL(..., import.meta.url)`) so that a
  // bundler never tries to turn the worker into a chunk; bundled code runs in-process.
  const dir = import.meta.dirname;
  if (!dir) return undefined;
  const file = path.join(dir, "thread.ts");
  return existsSync(file) ? file : undefined;
}

const abortError = () => Object.assign(new Error("the request was aborted"), { name: "AbortError" });

function errorFrom(e: WorkerError): Error {
  const { name, message, status, code, details } = e;
  return status !== undefined && code !== undefined ? new HttpError(status, code, message, details) : Object.assign(new Error(message), { name });
}

/**
 * Starts the worker on `db`'s file, registers it for this process and loads its store
 * in the background. Undefined (reports stay in-process) for an in-memory database or
 * where the TypeScript worker cannot be found (bundled code).
 */
export function startAnalyticsWorker(db: Db): AnalyticsWorker | undefined {
  const file = db.$client.name;
  const script = workerScript();
  if (!script || !file || file === ":memory:" || db.$client.memory) return undefined;
  // TypeScript entry: register tsx's loader inside the worker first (loader flags given
  // to the parent do not reach a worker's entry module on Node 20); see write-sink.ts.
  const bootstrap = `import("tsx/esm/api").then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(script).href)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { file: path.resolve(file) } });
  worker.unref();

  let nextId = 1;
  const queue: Queued[] = [];
  /** Jobs posted and not yet answered, in the order the worker runs them. */
  let inFlight: Queued[] = [];
  /**
   * Whether `next` may be posted now. A job goes alone (identical jobs still waiting share
   * its run), but the calls CSV's batch jobs (`lines`, `values`) go up to BATCHES_POSTED at
   * a time: the worker then starts the next batch as soon as it finishes one, instead of
   * idling until this thread's event loop (busy writing its own batches) reads the answer
   * and posts the next (docs/decisions/0029).
   */
  const mayPost = (next: Queued): boolean =>
    inFlight.length === 0 || (isBatchJob(next) && inFlight.length < BATCHES_POSTED && inFlight.every(isBatchJob));
  let dead: Error | undefined;
  let lastMs = 0;
  let busyMs = 0;
  let warmResolve!: (v: { calls: number; ms: number; scratchMb: number } | undefined) => void;
  const warm = new Promise<{ calls: number; ms: number; scratchMb: number } | undefined>((r) => (warmResolve = r));

  const pump = () => {
    if (dead) return;
    while (queue.length > 0 && mayPost(queue[0])) {
      const q = queue.shift()!;
      q.waiters = q.waiters.filter((w) => !w.signal?.aborted);
      if (q.waiters.length === 0) continue; // every asker went away before it started
      inFlight.push(q);
      // A calls CSV batch is written into a spent batch's buffer when one is kept (csv-bytes.ts spareBuffer): moved there and back.
      const into = q.job.kind === "lines" ? spareBuffer(0) : undefined;
      if (into) worker.postMessage({ ...q.job, into }, [into]);
      else worker.postMessage(q.job);
    }
  };

  const die = (err: Error) => {
    if (dead) return;
    dead = err;
    if (globalForWorker.callboardAnalyticsWorker === handle) globalForWorker.callboardAnalyticsWorker = undefined;
    logger.error({ err }, "analytics worker stopped; reports run in-process from now on");
    warmResolve(undefined);
    // Answer what was asked, in-process (blocking, but answered).
    const pending = [...inFlight, ...queue];
    inFlight = [];
    queue.length = 0;
    for (const q of pending) {
      if (q.parted) {
        // Its head is out: an order taken here now (another snapshot) would not continue it.
        for (const w of q.waiters) w.reject(err);
        continue;
      }
      try {
        const result = q.fallback();
        for (const w of q.waiters) w.resolve(result);
      } catch (e) {
        for (const w of q.waiters) w.reject(e instanceof Error ? e : new Error(String(e)));
      }
    }
  };

  worker.on("message", (reply: WorkerReply) => {
    const q = inFlight.find((j) => j.id === reply.id);
    if (!q) return;
    if (reply.part) {
      // The job goes on (it stays in flight): its askers get this much now.
      q.parted = true;
      for (const w of q.waiters) w.part?.(reply.result);
      return;
    }
    inFlight = inFlight.filter((j) => j !== q);
    lastMs = reply.ms;
    busyMs += reply.ms;
    if ("error" in reply) {
      const e = errorFrom(reply.error);
      for (const w of q.waiters) w.reject(e);
    } else for (const w of q.waiters) w.resolve(reply.result);
    pump();
  });
  worker.on("error", (e) => die(e instanceof Error ? e : new Error(String(e))));
  worker.on("exit", (code) => die(new Error(`analytics worker exited (${code})`)));

  /**
   * Queues a job; its answer is `JobAnswers<N>[K]` (worker/protocol.ts), or — where the
   * worker died first — the fallback's (undefined for a job that has none).
   */
  function enqueue<K extends JobKind, N extends ReportName, F extends JobAnswers<N>[K] | undefined>(
    job: JobMessage<K, N>, key: string, fallback: () => F, signal?: AbortSignal, part?: (v: OrderPart) => void,
  ): Promise<JobAnswers<N>[K] | F> {
    return new Promise<JobAnswers<N>[K] | F>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      // The listener goes once the job settles: a CSV asks for one job per batch on the
      // same request signal, and listeners left behind would pile up for the whole export.
      const onAbort = () => reject(abortError());
      const done = () => signal?.removeEventListener("abort", onAbort);
      const waiter: Waiter<JobAnswers<N>[K] | F> = {
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
        signal,
        part,
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      // Share a run only with an identical job that has not started: its answer then
      // reflects every write committed before this request arrived.
      const same = queue.find((q) => q.key === key);
      if (same) {
        same.waiters.push(waiter);
        return;
      }
      queue.push({ id: job.id, key, job, waiters: [waiter], fallback });
      pump();
    });
  }

  const reportJob = <K extends ReportJobKind, N extends ReportName>(kind: K, name: N, f: Filters, scope: Scope): JobMessage<K, N> => {
    const plainScope: Scope = { appPks: scope.appPks === "all" ? "all" : [...scope.appPks] };
    return { id: nextId++, kind, name, filters: f, scope: plainScope };
  };
  const keyOf = (job: JobMessage<ReportJobKind>) => JSON.stringify([job.kind, job.name, job.filters, job.scope.appPks]);

  function run<N extends ReportName>(name: N, kind: "json", f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>>;
  function run<N extends ReportName>(name: N, kind: "rows", f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportRow<N>[]>;
  function run<N extends ReportName>(name: N, kind: "order", f: Filters, scope: Scope, signal?: AbortSignal): Promise<HeadFirstOrder>;
  function run<N extends ReportName>(name: N, kind: ReportJobKind, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportAnswers<N>[ReportJobKind]> {
    if (dead) return Promise.reject(dead);
    const report: ReportAnswerer<N> = REPORT_ANSWERERS[name];
    if (kind === "json") {
      const job = reportJob("json", name, f, scope);
      return enqueue(job, keyOf(job), () => report.json(warehouse(), job.filters, job.scope), signal);
    }
    if (kind === "rows") {
      const job = reportJob("rows", name, f, scope);
      return enqueue(job, keyOf(job), () => Array.from(report.csv.rows(warehouse(), job.filters, job.scope)), signal);
    }
    const job = reportJob("order", name, f, scope);
    const order = report.csv.raw?.order;
    if (!order) return Promise.reject(new Error(`report ${name} has no CSV order`));
    return new Promise<HeadFirstOrder>((resolve, reject) => {
      const onHead = ({ head, values }: OrderPart): void => resolve({ head, headValues: values, all });
      const all: Promise<RowOrder> = enqueue(job, keyOf(job), () => order(warehouse(), job.filters, job.scope).all(), signal, onHead);
      // No head first (answered in-process after the worker died): the whole order at
      // once. After the head this only marks a late rejection as handled: the CSV
      // awaits `all` after its first rows, or never if the client went away.
      all.then((whole) => resolve({ head: whole.subarray(0, 0), all }), reject);
    });
  }

  const handle: AnalyticsWorker = {
    warm,
    get lastMs() {
      return lastMs;
    },
    get busyMs() {
      return busyMs;
    },
    get alive() {
      return !dead;
    },
    run,
    values(pks, signal) {
      if (dead) return Promise.resolve(undefined);
      // Never shared (the key is the job's own), and no in-process fallback: loading a store
      // on this thread would block it for seconds; the batch is read whole instead.
      const job: JobMessage<"values"> = { id: nextId++, kind: "values", pks };
      return enqueue(job, `values:${job.id}`, () => undefined, signal);
    },
    lines(pks, apps, tz, signal) {
      if (dead) return Promise.resolve(undefined);
      const job: JobMessage<"lines"> = { id: nextId++, kind: "lines", pks, apps, tz };
      return enqueue(job, `lines:${job.id}`, () => undefined, signal);
    },
    close: async () => {
      if (globalForWorker.callboardAnalyticsWorker === handle) globalForWorker.callboardAnalyticsWorker = undefined;
      if (dead) return;
      dead = new Error("analytics worker closed");
      for (const q of [...inFlight, ...queue]) for (const w of q.waiters) w.reject(dead);
      inFlight = [];
      queue.length = 0;
      await worker.terminate();
    },
  };

  const t0 = performance.now();
  const warmJob: JobMessage<"warm"> = { id: nextId++, kind: "warm" };
  enqueue(warmJob, "warm", () => undefined)
    .then((r) => {
      const calls = r?.calls ?? 0;
      const scratchMb = Math.round((r?.scratchBytes ?? 0) / 1e6);
      const ms = Math.round(performance.now() - t0);
      logger.info({ calls, ms, sumsMs: r?.sumsMs ?? 0, scratchMb }, "analytics store loaded (worker)");
      warmResolve({ calls, ms, scratchMb });
    })
    .catch(() => warmResolve(undefined));

  globalForWorker.callboardAnalyticsWorker = handle;
  return handle;
}

/** The store values source of a raw CSV whose order came from the worker, which writes batches' lines too. */
export function storeValuesOffThread(signal?: AbortSignal): StoreValuesOf | undefined {
  const w = analyticsWorker();
  return w ? Object.assign((pks: RowOrder) => w.values(pks, signal), { lines: (pks: RowOrder, apps: Array<[number, string]>, tz: string) => w.lines(pks, apps, tz, signal) }) : undefined;
}
