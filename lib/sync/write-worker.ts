/**
 * The write-sink worker: one connection, one CallWriter, batches in order.
 *
 * Rows are written as each page's message arrives, inside a transaction that the commit
 * message closes; not kept until the commit. Kept rows lived across several scavenges,
 * were promoted and left old-space garbage behind: major GCs took about a sixth of this
 * thread, which is the sync's narrowest stage. Written at once, they die young.
 *
 * The transaction is also committed when no message has come for IDLE_COMMIT_MS (a
 * slow upstream): an open transaction holds the warehouse's write lock, and the
 * server's webhook ingest must not wait behind a page fetch. The commit reply then
 * counts everything written since the previous reply.
 */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import { CallWriter, type BatchResult, type SyncProgress, type WriteRow } from "./writer";

const IDLE_COMMIT_MS = 100;

const { file, appPk } = workerData as { file: string; appPk: number };
const db = openDatabase(file, { migrate: false });
const sqlite = db.$client;
// Backfill writes append at the ends of the B-trees: a small cache does as well as the
// default 64 MB and keeps the syncing process's memory down.
sqlite.pragma("cache_size = -16384");
const writer = new CallWriter(db, appPk);

type Message = { rows: WriteRow[] } | { id: number } | { progress: { runPk: number; counts: SyncProgress } };

/** Written since the last commit reply. */
let done: BatchResult = { inserted: 0, updated: 0, refused: [], ms: 0 };
/** A failure of the database itself: reported by the next commit reply. */
let failure: Error | undefined;
let idle: NodeJS.Timeout | undefined;

function commitOpen(): void {
  if (!sqlite.inTransaction) return;
  const t0 = performance.now();
  sqlite.exec("COMMIT");
  done.ms += performance.now() - t0;
}

function abandon(err: unknown): void {
  failure ??= err instanceof Error ? err : new Error(String(err));
  if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
}

function write(rows: WriteRow[]): void {
  if (failure) return; // the commit reply reports it; nothing more is written
  try {
    const t0 = performance.now();
    if (!sqlite.inTransaction) sqlite.exec("BEGIN");
    // Inside the open transaction, writeTolerant's own transaction is a savepoint: a
    // refused record rolls back and retries this page only.
    const r = writer.writeTolerant(rows);
    done.inserted += r.inserted;
    done.updated += r.updated;
    for (const x of r.refused) done.refused.push(x);
    done.ms += performance.now() - t0;
  } catch (err) {
    abandon(err);
  }
}

parentPort?.on("message", (m: Message) => {
  clearTimeout(idle);
  if ("rows" in m) {
    write(m.rows);
    idle = setTimeout(() => {
      try {
        commitOpen();
      } catch (err) {
        abandon(err);
      }
    }, IDLE_COMMIT_MS);
    return;
  }
  if ("progress" in m) {
    // Advisory (the run's final row is written by the sync itself): a failure must not
    // fail the sync. Inside an open transaction it commits with the rows it counts.
    try {
      writer.saveProgress(m.progress.runPk, m.progress.counts);
    } catch {
      /* the next progress update or the final write covers it */
    }
    return;
  }
  try {
    if (!failure) commitOpen();
  } catch (err) {
    abandon(err);
  }
  if (failure) {
    const e = failure;
    failure = undefined;
    parentPort?.postMessage({ id: m.id, error: { name: e.name, message: e.message } });
  } else {
    parentPort?.postMessage({ id: m.id, result: done });
  }
  done = { inserted: 0, updated: 0, refused: [], ms: 0 };
});
