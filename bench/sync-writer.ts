/**
 * The sync's write side alone: CPU per call of CallWriter on N calls of a data mix, into
 * a fresh warehouse, with the write worker's pragmas, without HTTP or the sync thread.
 * The rows are built first (as the sync thread stages them: raw records as offsets into
 * a page of 1,000 records), then written page by page, each in its transaction.
 *
 *   npx tsx bench/sync-writer.ts [--calls 200000] [--mix heavy-users]
 *     [--rows-per-insert N]     participant rows per INSERT (1: one statement a row)
 *     [--texts]                 decode raw records to strings first (the inline sink's way)
 *     [--wal-autocheckpoint N]  the connection's checkpoint interval in pages
 *
 * Compare variants by interleaving runs: on a shared box the wall time follows the
 * neighbours, the thread's CPU far less.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import { DATA_MIXES, isDataMixName } from "@/lib/emulator/mixes";
import { serializeServed } from "@/lib/emulator/quirks";
import { parseCallRecord } from "@/lib/platform/call-record";
import { threadCpuMs } from "@/lib/sync/thread-cpu";
import { CallWriter, contentHash, extraParticipantJson, resolveRawBytes, resolveRawTexts, toWriteRow, type WriteRow } from "@/lib/sync/writer";

const opts = new Command()
  .option("--calls <n>", "calls", "200000")
  .option("--mix <name>", "data mix", "heavy-users")
  .option("--rows-per-insert <n>", "participant rows per INSERT")
  .option("--texts", "decode raw records to strings before binding")
  .option("--wal-autocheckpoint <pages>", "checkpoint interval of the connection, in pages")
  .parse(process.argv)
  .opts<{ calls: string; mix: string; rowsPerInsert?: string; texts?: boolean; walAutocheckpoint?: string }>();
if (!isDataMixName(opts.mix)) throw new Error(`--mix: unknown mix "${opts.mix}"`);
const mix = opts.mix;
const calls = Number(opts.calls);
process.env.AUTH_SECRET ??= "bench-only-secret-bench-only-secret-000";

const ctx = makeContext({ appId: "bench", seed: 1, count: calls, now: 1_780_000_000, months: 10, mix });
const pages: Array<{ rows: WriteRow[]; bytes: Buffer }> = [];
let rows: WriteRow[] = [];
let texts: Buffer[] = [];
let at = 0;
let participants = 0;
for (let slot = 0; slot < calls; slot++) {
  const text = serializeServed(generateCallAt(ctx, slot), undefined, DATA_MIXES[mix]);
  const rec = JSON.parse(text) as Record<string, unknown>;
  const r = parseCallRecord(rec);
  if (!r.ok) continue;
  const bytes = Buffer.from(text, "utf8");
  const raw = Array.isArray(rec.participants) ? (rec.participants as unknown[]) : [];
  participants += r.call.participants.length;
  rows.push(toWriteRow({ call: r.call, rawJson: null, rawStart: at, rawEnd: at + bytes.length, hash: contentHash(bytes), participantExtras: raw.map(extraParticipantJson) }));
  texts.push(bytes);
  at += bytes.length;
  if (rows.length === 1000 || slot === calls - 1) {
    pages.push({ rows, bytes: Buffer.concat(texts) });
    [rows, texts, at] = [[], [], 0];
  }
}

const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-writer-"));
try {
  const file = path.join(dir, "warehouse.db");
  const setup = openDatabase(file);
  const app = addApp(setup, { appId: "bench", name: "bench", region: "us", apiKey: "k".repeat(32), callsUrl: "http://127.0.0.1:9" });
  setup.$client.close();
  // The write worker's connection (lib/sync/write-worker.ts).
  const db = openDatabase(file, { migrate: false });
  db.$client.pragma("cache_size = -16384");
  db.$client.pragma("foreign_keys = OFF");
  db.$client.pragma(`wal_autocheckpoint = ${Number(opts.walAutocheckpoint ?? 16_384)}`);
  const writer = new CallWriter(db, app.pk, opts.rowsPerInsert ? { maxParticipantRowsPerStatement: Number(opts.rowsPerInsert) } : {});
  const cpu0 = threadCpuMs() ?? 0;
  const t0 = performance.now();
  for (const p of pages) {
    (opts.texts ? resolveRawTexts : resolveRawBytes)(p.rows, p.bytes);
    writer.writeTolerant(p.rows);
  }
  const cpuMs = (threadCpuMs() ?? 0) - cpu0;
  const wallMs = performance.now() - t0;
  db.$client.close();
  console.log(JSON.stringify({ mix, calls, participantsPerCall: +(participants / calls).toFixed(2), cpuUsPerCall: +((cpuMs * 1000) / calls).toFixed(1), wallUsPerCall: +((wallMs * 1000) / calls).toFixed(1) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
