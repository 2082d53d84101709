/** The write-sink worker: one connection, one CallWriter, batches in order. */
import { parentPort, workerData } from "node:worker_threads";
import { openDatabase } from "@/db/client";
import { CallWriter, type WriteRow } from "./writer";

const { file, appPk } = workerData as { file: string; appPk: number };
const db = openDatabase(file, { migrate: false });
const writer = new CallWriter(db, appPk);

parentPort?.on("message", (m: { id: number; batch: WriteRow[] }) => {
  try {
    parentPort?.postMessage({ id: m.id, result: writer.writeTolerant(m.batch) });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    parentPort?.postMessage({ id: m.id, error: { name: e.name, message: e.message } });
  }
});
