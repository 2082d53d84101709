import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Db } from "@/db/client";
import { resolveRawTexts, toWriteRow, type PendingCall, type WriteRow } from "./pending-rows";
import { type BatchResult, type CallWriter, type SyncProgress } from "./writer";

/**
 * Where batches are written: inline on this thread, or on a worker thread with its own
 * connection so that parsing and fetching the next pages overlap with the write
 * transactions (SQLite work is synchronous; on this thread it would stall the loop).
 *
 * Rows are staged as soon as a page is parsed and committed as one transaction per
 * batch. With the worker, staging posts the rows at once, so this thread holds no batch:
 * rows that lived across a few scavenges would be promoted and pile up as old-space
 * garbage (the syncing process's peak memory). Commits are processed in order.
 */
export interface WriteSink {
  readonly kind: "inline" | "worker" | "clickhouse";
  /**
   * Queues calls for the next commit. `page`: the bytes their raw records lie in, when
   * they were staged as offsets (rawStart, rawEnd); the sink may take its memory over.
   * Each sink builds its own rows (SQLite: the flat WriteRow; ClickHouse: RowBinary).
   */
  stage(calls: PendingCall[], page?: Buffer): void;
  /**
   * The SQLite sinks: queues calls already made into their flat rows (`toWriteRow`'s
   * layout; write-row.ts reads a record straight into one), as `stage` would make them.
   */
  stageRows?(rows: WriteRow[], page?: Buffer): void;
  /**
   * Resolves when the sink can take more (a sink that streams to a slower store makes the
   * sync wait here instead of buffering). Absent: always ready.
   */
  drained?(): Promise<void>;
  /** Writes everything staged since the last commit, in one transaction. */
  commit(): Promise<BatchResult>;
  /**
   * Updates the run's progress row after the commits requested so far. With the worker
   * it is written there, in turn: on this thread the UPDATE would wait for the worker's
   * write lock and stall parsing for a whole transaction (or fail after the busy timeout).
   */
  saveProgress(runPk: number, counts: SyncProgress): void;
  /** The worker's event-loop utilisation since it started (diagnostics). */
  utilization?(): number;
  /** The worker thread's CPU time (ms) from its first write to its last commit reply (diagnostics; Linux). */
  cpuMs?(): number | undefined;
  close(): Promise<void>;
}

export function inlineSink(writer: CallWriter): WriteSink {
  let staged: WriteRow[] = [];
  const stageRows = (rows: WriteRow[], page?: Buffer) => {
    resolveRawTexts(rows, page);
    for (const r of rows) staged.push(r);
  };
  return {
    kind: "inline",
    stage: (calls, page) => stageRows(calls.map(toWriteRow), page),
    stageRows,
    commit: async () => {
      const batch = staged;
      staged = [];
      return writer.writeTolerant(batch);
    },
    saveProgress: (runPk, counts) => writer.saveProgress(runPk, counts),
    close: async () => undefined,
  };
}

interface Reply {
  id: number;
  result?: BatchResult;
  /** The worker thread's CPU time since its first write (thread-cpu.ts). */
  cpuMs?: number;
  /** `code`: SQLite's result code name (SQLITE_FULL, SQLITE_BUSY, ...), kept across the thread. */
  error?: { name: string; message: string; code?: string };
}

/**
 * What the worker's connection takes over from the sync's own: how long to wait for
 * another writer (busy_timeout) and how large the file may grow (max_page_count). Both
 * are per connection in SQLite; a worker that opened the file with the defaults would
 * wait and grow by other rules than the connection it writes for.
 */
export interface WorkerConnectionLimits {
  busyTimeoutMs: number;
  maxPageCount: number;
}

function connectionLimits(db: Db): WorkerConnectionLimits {
  return {
    busyTimeoutMs: db.$client.pragma("busy_timeout", { simple: true }) as number,
    maxPageCount: db.$client.pragma("max_page_count", { simple: true }) as number,
  };
}

function workerScript(): string | undefined {
  // Built from the module's own folder (not `new URL(..., import.meta.url)`) so that a
  // bundler never tries to turn the worker into a chunk; bundled code writes inline.
  const dir = import.meta.dirname;
  if (!dir) return undefined;
  const file = path.join(dir, "write-worker.ts");
  return existsSync(file) ? file : undefined;
}

/** How long a closing write worker may take to finish its queue before it is terminated. */
const WORKER_CLOSE_GRACE_MS = 10_000;

/** A worker-thread sink, or undefined where one cannot run (in-memory db, bundled code). */
export function workerSink(db: Db, appPk: number): WriteSink | undefined {
  const file = db.$client.name;
  const script = workerScript();
  if (!script || !file || file === ":memory:" || db.$client.memory) return undefined;
  // The worker is TypeScript: register tsx's loader inside it first (loader flags given
  // to the parent do not reach a worker's entry module on Node 20).
  const bootstrap = `import("tsx/esm/api").then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(script).href)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { file, appPk, limits: connectionLimits(db) } });
  worker.unref();
  let nextId = 1;
  const waiting = new Map<number, { resolve: (r: BatchResult) => void; reject: (e: Error) => void }>();
  let dead: Error | undefined;
  let workerCpuMs: number | undefined;
  const failAll = (err: Error) => {
    dead ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on("message", (m: Reply) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.cpuMs !== undefined) workerCpuMs = m.cpuMs;
    if (m.result) w.resolve(m.result);
    else {
      const e = Object.assign(new Error(m.error?.message ?? "write worker failed"), { code: m.error?.code });
      e.name = m.error?.name ?? "Error";
      w.reject(e);
    }
  });
  worker.on("error", (e) => failAll(e instanceof Error ? e : new Error(String(e))));
  worker.on("exit", (code) => failAll(new Error(`write worker exited (${code})`)));
  const stageRows = (rows: WriteRow[], page?: Buffer) => {
    // After a failure the next commit rejects; nothing to stage into.
    if (dead || !rows.length) return;
    if (!page) return worker.postMessage({ rows });
    // The page's memory moves to the worker instead of being copied: the caller is done
    // with it (its records are hashed), and the worker decodes the raw records from it.
    // A page that shares its memory (a small body in Node's buffer pool) is copied first.
    const whole = page.byteOffset === 0 && page.byteLength === page.buffer.byteLength;
    const memory = (whole ? page.buffer : page.buffer.slice(page.byteOffset, page.byteOffset + page.byteLength)) as ArrayBuffer;
    worker.postMessage({ rows, page: memory, pageLength: page.byteLength }, [memory]);
  };
  return {
    kind: "worker",
    stage: (calls, page) => stageRows(calls.map(toWriteRow), page),
    stageRows,
    commit: () =>
      new Promise<BatchResult>((resolve, reject) => {
        if (dead) return reject(dead);
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id });
      }),
    saveProgress: (runPk, counts) => {
      if (!dead) worker.postMessage({ progress: { runPk, counts } });
    },
    utilization: () => worker.performance.eventLoopUtilization().utilization,
    cpuMs: () => workerCpuMs,
    close: async () => {
      if (dead) return;
      // Ask the worker to finish what it was sent and close its connection; terminate()
      // only if it does not exit in time (see write-worker.ts on why not at once).
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.postMessage({ close: true });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), WORKER_CLOSE_GRACE_MS)));
      const outcome = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (outcome === "late") await worker.terminate();
    },
  };
}
