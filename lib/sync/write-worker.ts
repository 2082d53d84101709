/**
 * The write-sink worker: one connection, one CallWriter, pages in order.
 *
 * Each page's rows are written as its message arrives, in their own transaction (about
 * 4,000 rows: large enough that SQLite's per-commit cost is small). Rows kept until the
 * sync's commit message lived across several scavenges, were promoted and left
 * old-space garbage behind (major GCs took about a sixth of this thread, the sync's
 * narrowest stage); one open transaction across pages needs a savepoint per page for
 * writeTolerant, and savepoints cost as much again. The commit message only reports:
 * everything written since the previous reply, committed.
 *
 * Pages whose session ids fall all over the index (an upstream with random ids,
 * scattered-keys.ts) are the exception: their rows wait for the commit message (or an
 * ordered page, the close message, or about 24,000 table rows) and go in one transaction, with a page
 * cache sized for the index. Each index leaf is then written once for about four times
 * as many calls, which costs far more than the held rows' garbage (docs/decisions/0027).
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import { threadCpuMs } from "./thread-cpu";
import type { WorkerConnectionLimits } from "./write-sink";
import { keysScattered, meanIdLength, scatteredCacheKiB } from "./scattered-keys";
import { resolveRawBytes, W, type WriteRow } from "./pending-rows";
import { CallWriter, tuneForBackfill, type BatchResult, type SyncProgress } from "./writer";

const { file, appPk, limits } = workerData as { file: string; appPk: number; limits: WorkerConnectionLimits };
const db = openDatabase(file, { migrate: false });
db.$client.pragma(`busy_timeout = ${Math.max(0, Math.floor(limits.busyTimeoutMs))}`);
db.$client.pragma(`max_page_count = ${Math.max(1, Math.floor(limits.maxPageCount))}`);
tuneForBackfill(db.$client);
const writer = new CallWriter(db, appPk);

type Message = { rows: WriteRow[]; page?: ArrayBuffer; pageLength?: number } | { id: number } | { progress: { runPk: number; counts: SyncProgress } } | { close: true };

/** This thread's CPU time when its first rows arrived (loading the modules is not the sync's cost). */
let cpuAtFirstWrite: number | undefined;
const cpuSinceFirstWrite = () => {
  const now = threadCpuMs();
  return now === undefined || cpuAtFirstWrite === undefined ? undefined : now - cpuAtFirstWrite;
};

/** Written since the last commit reply. */
let done: BatchResult = { inserted: 0, updated: 0, refused: [], ms: 0 };
/**
 * A failure of the database itself: reported by every later commit reply, and nothing is
 * written after it (rows written past a failed batch would leave a gap below them).
 */
let failure: Error | undefined;

/** Rows of pages with scattered ids, waiting to be written in one transaction. */
let held: WriteRow[] = [];
/** Table rows (calls and their participants) of the calls held. */
let heldTableRows = 0;
/**
 * A bound on what is held: the sync's commit of 4,000 calls of every judged mix (up to
 * about 21,000 table rows with heavy-users' 4.2 participants), but about one page of
 * big-meetings (29 rows a call), whose held rows would take the syncing process past its
 * 600 MB (645 MB measured) for no gain: a call of 6 KB writes many pages of its own.
 */
const MAX_HELD_TABLE_ROWS = 24_000;
/** Calls this worker has written: with the ids' length, what the session index holds of the app. */
let callsWritten = 0;
let cacheKiB = 0;

function write(rows: WriteRow[]): void {
  if (failure || rows.length === 0) return;
  try {
    const r = writer.writeTolerant(rows);
    callsWritten += rows.length;
    done.inserted += r.inserted;
    done.updated += r.updated;
    for (const x of r.refused) done.refused.push(x);
    done.ms += r.ms;
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
  }
}

function writeHeld(): void {
  const rows = held;
  held = [];
  heldTableRows = 0;
  write(rows);
}

/** Grows the page cache with the app's part of the session index (never shrinks it). */
function sizeCacheFor(rows: WriteRow[]): void {
  const kib = scatteredCacheKiB(callsWritten + held.length + rows.length, meanIdLength(rows));
  if (kib <= cacheKiB) return;
  cacheKiB = kib;
  db.$client.pragma(`cache_size = -${kib}`);
}

parentPort?.on("message", (m: Message) => {
  if ("close" in m) {
    writeHeld();
    // Messages are handled in order: everything sent before this one is done. Closing
    // here (not by Worker.terminate() from outside) never tears the isolate down while a
    // statement is raising an error, which aborts the whole process in better-sqlite3.
    try {
      db.$client.close();
    } catch {
      /* closing a connection that failed changes nothing stored */
    }
    parentPort?.close();
    return;
  }
  if ("rows" in m) {
    cpuAtFirstWrite ??= threadCpuMs();
    if (failure) return; // the commit reply reports it; nothing more is written
    // Raw records staged as offsets into their page (the page's memory came with them).
    if (m.page) resolveRawBytes(m.rows, Buffer.from(m.page, 0, m.pageLength));
    if (keysScattered(m.rows)) {
      sizeCacheFor(m.rows);
      for (const r of m.rows) {
        held.push(r);
        heldTableRows += 1 + (r[W.participantCount] as number);
      }
      if (heldTableRows >= MAX_HELD_TABLE_ROWS) writeHeld();
      return;
    }
    writeHeld();
    write(m.rows);
    return;
  }
  if ("progress" in m) {
    // Names only pages of commits already replied to (sync-app.ts), never rows held here.
    // Advisory (the run's final row is written by the sync itself): a failure must not
    // fail the sync.
    try {
      writer.saveProgress(m.progress.runPk, m.progress.counts);
    } catch {
      /* the next progress update or the final write covers it */
    }
    return;
  }
  // A commit: everything sent before it, held rows included, is written when it replies.
  writeHeld();
  if (failure) {
    const e = failure;
    const code = (e as { code?: unknown }).code;
    parentPort?.postMessage({ id: m.id, error: { name: e.name, message: e.message, code: typeof code === "string" ? code : undefined } });
  } else {
    parentPort?.postMessage({ id: m.id, result: done, cpuMs: cpuSinceFirstWrite() });
  }
  done = { inserted: 0, updated: 0, refused: [], ms: 0 };
});
