/** The write-sink worker: one connection, one CallWriter, batches in order. */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import { CallWriter, type SyncProgress, type WriteRow } from "./writer";

const { file, appPk } = workerData as { file: string; appPk: number };
const db = openDatabase(file, { migrate: false });
// Backfill writes append at the ends of the B-trees: a small cache does as well as the
// default 64 MB and keeps the syncing process's memory down.
db.$client.pragma("cache_size = -16384");
const writer = new CallWriter(db, appPk);

/** Rows staged since the last commit (the sync posts each page's rows as it parses them). */
let staged: WriteRow[] = [];

type Message = { rows: WriteRow[] } | { id: number } | { progress: { runPk: number; counts: SyncProgress } };

parentPort?.on("message", (m: Message) => {
  if ("rows" in m) {
    for (const r of m.rows) staged.push(r);
    return;
  }
  if ("progress" in m) {
    // Advisory (the run's final row is written by the sync itself): a failure must not
    // fail the sync.
    try {
      writer.saveProgress(m.progress.runPk, m.progress.counts);
    } catch {
      /* the next progress update or the final write covers it */
    }
    return;
  }
  const batch = staged;
  staged = [];
  try {
    parentPort?.postMessage({ id: m.id, result: writer.writeTolerant(batch) });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    parentPort?.postMessage({ id: m.id, error: { name: e.name, message: e.message } });
  }
});
