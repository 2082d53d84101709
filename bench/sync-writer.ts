/**
 * The sync's write side alone: CPU per call of CallWriter on N calls of a data mix, into
 * a fresh warehouse, with the write worker's pragmas, without HTTP or the sync thread.
 * Pages of 1,000 records are generated one at a time (raw records staged as offsets into
 * the page, as the sync thread stages them) and each is written in its transaction; only
 * the writing is timed.
 *
 *   npx tsx bench/sync-writer.ts [--calls 200000] [--mix heavy-users]
 *     [--worker]                through the real write worker (workerSink): its CPU then
 *                               includes receiving the rows (structured clone) and its GC
 *     [--rows-per-insert N]     participant rows per INSERT (1: one statement a row)
 *     [--texts]                 decode raw records to strings first (the inline sink's way)
 *     [--wal-autocheckpoint N]  the connection's checkpoint interval in pages (inline)
 *     [--session-ids random]    random UUIDs as session ids (served newest first as in a
 *                               sync: only the session index sees random keys)
 *     [--slot-order]            calls in generation order: session ids and start times
 *                               fall anywhere in their indexes
 *     [--page-size N]           the fresh file's page size (default: a new warehouse's)
 *     [--drop-trigger NAME...]  without these triggers (what one costs)
 *     [--drop-index NAME...]    without these indexes (what one costs)
 *     [--pragma P...]           more pragmas on the writing connection (inline)
 *
 * Compare variants by interleaving runs: on a shared box the wall time follows the
 * neighbours, the thread's CPU far less.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { Command } from "commander";
import { NEW_FILE_PAGE_SIZE, openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import { DATA_MIXES, isDataMixName } from "@/lib/emulator/mixes";
import { serializeServed } from "@/lib/emulator/quirks";
import { isSessionIdOrder } from "@/lib/emulator/session-ids";
import { parseCallRecord } from "@/lib/platform/call-record";
import { threadCpuMs } from "@/lib/sync/thread-cpu";
import { workerSink } from "@/lib/sync/write-sink";
import { contentHash, extraParticipantJson, resolveRawBytes, resolveRawTexts, toWriteRow, type PendingCall } from "@/lib/sync/pending-rows";
import { CallWriter, tuneForBackfill } from "@/lib/sync/writer";

const opts = new Command()
  .option("--calls <n>", "calls", "200000")
  .option("--mix <name>", "data mix", "heavy-users")
  .option("--worker", "write through the write worker thread")
  .option("--rows-per-insert <n>", "participant rows per INSERT")
  .option("--texts", "decode raw records to strings before binding")
  .option("--wal-autocheckpoint <pages>", "checkpoint interval of the connection, in pages")
  .option("--pragma <p...>", "more pragmas on the writing connection (inline only), e.g. cache_size=-65536")
  .option("--drop-trigger <name...>", "drop these triggers first (what a trigger costs)")
  .option("--drop-index <name...>", "drop these indexes first (what an index costs)")
  .option("--session-ids <order>", "time | random: the upstream's session ids (lib/emulator/session-ids.ts)", "time")
  .option("--slot-order", "write calls in generation order (session ids and times in random order), not newest first")
  .option("--page-size <n>", "the fresh file's page size (default: a new warehouse's)")
  .parse(process.argv)
  .opts<{ calls: string; mix: string; worker?: boolean; rowsPerInsert?: string; texts?: boolean; walAutocheckpoint?: string; pragma?: string[]; dropTrigger?: string[]; dropIndex?: string[]; pageSize?: string; slotOrder?: boolean; sessionIds: string }>();
if (!isDataMixName(opts.mix)) throw new Error(`--mix: unknown mix "${opts.mix}"`);
const mix = opts.mix;
if (!isSessionIdOrder(opts.sessionIds)) throw new Error(`--session-ids: "${opts.sessionIds}" is not time or random`);
const sessionIds = opts.sessionIds;
const calls = Number(opts.calls);
const PAGE = 1000;
process.env.AUTH_SECRET ??= "bench-only-secret-bench-only-secret-000";

const ctx = makeContext({ appId: "bench", seed: 1, count: calls, now: 1_780_000_000, months: 10, mix, sessionIds });
let participants = 0;
/**
 * The slots in the order the platform serves them, newest first (a first pass over their
 * keys). Their session ids then arrive in descending order, as in a sync; `--slot-order`
 * writes them in generation order instead, where the keys fall anywhere in the index
 * (an upstream whose session ids do not follow time).
 */
const order: number[] = Array.from({ length: calls }, (_, i) => i);
if (!opts.slotOrder) {
  const keys = order.map((slot) => {
    const c = generateCallAt(ctx, slot);
    return { slot, initiatedAt: c.initiatedAt, sessionId: c.sessionId };
  });
  keys.sort((a, b) => b.initiatedAt - a.initiatedAt || (a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0));
  keys.forEach((k, i) => (order[i] = k.slot));
}

/** The page of records from slot `from`: their bytes back to back and the calls staged as offsets into them. */
function pageAt(from: number): { pending: PendingCall[]; bytes: Buffer } {
  const pending: PendingCall[] = [];
  const texts: Buffer[] = [];
  let at = 0;
  for (let i = from; i < Math.min(calls, from + PAGE); i++) {
    const slot = order[i];
    const text = serializeServed(generateCallAt(ctx, slot), undefined, DATA_MIXES[mix]);
    const rec = JSON.parse(text) as Record<string, unknown>;
    const r = parseCallRecord(rec);
    if (!r.ok) continue;
    const bytes = Buffer.from(text, "utf8");
    const raw = Array.isArray(rec.participants) ? (rec.participants as unknown[]) : [];
    participants += r.call.participants.length;
    pending.push({ call: r.call, rawJson: null, rawStart: at, rawEnd: at + bytes.length, hash: contentHash(bytes), participantExtras: raw.map(extraParticipantJson) });
    texts.push(bytes);
    at += bytes.length;
  }
  return { pending, bytes: Buffer.concat(texts) };
}

const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-writer-"));
try {
  const file = path.join(dir, "warehouse.db");
  if (opts.pageSize && Number(opts.pageSize) !== NEW_FILE_PAGE_SIZE) {
    // An empty file with that page size (VACUUM writes its header): openDatabase keeps it.
    const empty = new Database(file);
    empty.pragma(`page_size = ${Number(opts.pageSize)}`);
    empty.exec("VACUUM");
    empty.close();
  }
  const setup = openDatabase(file);
  for (const t of opts.dropTrigger ?? []) setup.$client.exec(`DROP TRIGGER ${t}`);
  for (const i of opts.dropIndex ?? []) setup.$client.exec(`DROP INDEX ${i}`);
  const app = await addApp(setup, { appId: "bench", name: "bench", region: "us", apiKey: "k".repeat(32), callsUrl: "http://127.0.0.1:9" });
  let cpuMs = 0;
  const t0 = performance.now();
  if (opts.worker) {
    const sink = workerSink(setup, app.pk);
    if (!sink) throw new Error("no write worker here");
    for (let from = 0; from < calls; from += PAGE) {
      const p = pageAt(from);
      sink.stage(p.pending, p.bytes);
      // The sync commits every 4,000 calls, with at most one commit outstanding.
      if ((from / PAGE) % 4 === 3) await sink.commit();
    }
    await sink.commit();
    cpuMs = sink.cpuMs?.() ?? NaN;
    await sink.close();
    setup.$client.close();
  } else {
    setup.$client.close();
    // The write worker's connection (lib/sync/write-worker.ts).
    const db = openDatabase(file, { migrate: false });
    tuneForBackfill(db.$client);
    if (opts.walAutocheckpoint) db.$client.pragma(`wal_autocheckpoint = ${Number(opts.walAutocheckpoint)}`);
    for (const x of opts.pragma ?? []) db.$client.pragma(x);
    const writer = new CallWriter(db, app.pk, opts.rowsPerInsert ? { maxParticipantRowsPerStatement: Number(opts.rowsPerInsert) } : {});
    for (let from = 0; from < calls; from += PAGE) {
      const p = pageAt(from);
      const rows = p.pending.map(toWriteRow);
      const cpu0 = threadCpuMs() ?? 0;
      (opts.texts ? resolveRawTexts : resolveRawBytes)(rows, p.bytes);
      writer.writeTolerant(rows);
      cpuMs += (threadCpuMs() ?? 0) - cpu0;
    }
    db.$client.close();
  }
  const wallMs = performance.now() - t0;
  console.log(JSON.stringify({ mix, calls, sessionIds, slotOrder: !!opts.slotOrder, worker: !!opts.worker, participantsPerCall: +(participants / calls).toFixed(2), cpuUsPerCall: +((cpuMs * 1000) / calls).toFixed(2), wallUsPerCall: +((wallMs * 1000) / calls).toFixed(1) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
