/**
 * The byte reader (page-reader.ts, decision 0022) stages exactly the rows that the JSON
 * path stages: the same page handled by RunState once from JSON.parse of the whole page
 * (every record whole, as before the reader: parseCallRecord, then toWriteRow) and once
 * from the reader (its records straight into rows, write-row.ts) must give the same
 * rows for the write side (every column value, types and -0 included, raw ranges, hashes,
 * participants' unknown keys) and the same skipped records with the same reasons.
 * Records: every data mix of the emulator, its deliberately invalid records, and
 * hand-written ones with escapes, unicode, strings for numbers, unknown and repeated keys,
 * nested values, missing and null fields, and invalid UTF-8.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import { DATA_MIXES, DATA_MIX_NAMES } from "@/lib/emulator/mixes";
import { INVALID_KINDS, serializeServed, serializeWire, toWire } from "@/lib/emulator/quirks";
import { arrayMemberRanges } from "@/lib/platform/json-elements";
import { readCallsPage } from "@/lib/platform/page-reader";
import { HOSTILE_RECORDS } from "./test-hostile-records";
import type { PageCursor } from "./resume";
import { RunState } from "./run-state";
import type { StoredCalls } from "./stored-calls";
import type { SyncSummary } from "./summary";
import { workerSink, type WriteSink } from "./write-sink";
import { toWriteRow, type PendingCall, type WriteRow } from "./pending-rows";
import { CallWriter } from "./writer";

process.env.AUTH_SECRET ??= "test-secret-test-secret-test-secret-00";
const dir = mkdtempSync(path.join(tmpdir(), "callboard-record-reading-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** A record with bytes that are not UTF-8 (stored with U+FFFD on both paths). */
const INVALID_UTF8 = Buffer.concat([Buffer.from(`{"sessionId":"bad-`), Buffer.from([0xff, 0xc3]), Buffer.from(`","initiatedAt":1700000000,"participants":[{"uid":"\xe9"}]}`, "latin1")]);

function mixRecords(): string[] {
  const out: string[] = [];
  for (const mix of DATA_MIX_NAMES) {
    const ctx = makeContext({ appId: `r-${mix}`, seed: 11, count: 150, now: 1_780_000_000, months: 10, mix });
    for (let s = 0; s < 150; s++) {
      const rec = generateCallAt(ctx, s);
      out.push(serializeServed(rec, undefined, DATA_MIXES[mix]));
      if (s < INVALID_KINDS.length) out.push(serializeWire(toWire(rec, INVALID_KINDS[s], DATA_MIXES[mix]), DATA_MIXES[mix]));
    }
  }
  return out;
}

function pageOf(records: Array<string | Buffer>, separator = ","): Buffer {
  const parts: Buffer[] = [Buffer.from(`{"meta":{"pagination":{"total_pages":1}},"data":[`)];
  records.forEach((r, i) => {
    if (i > 0) parts.push(Buffer.from(separator));
    parts.push(typeof r === "string" ? Buffer.from(r, "utf8") : r);
  });
  parts.push(Buffer.from(`]}`));
  return Buffer.concat(parts);
}

/** A run's bookkeeping over `sink`, committing every `batchSize` calls. */
function runState(writer: StoredCalls, sink: WriteSink, batchSize: number) {
  const summary = {
    skipped: 0, skippedRecords: [], unchanged: 0, inserted: 0, updated: 0,
    timings: { wallMs: 0, fetchWaitMs: 0, fetchMs: 0, parseMs: 0, dbMs: 0, refreshMs: 0 },
  } as unknown as SyncSummary;
  const cursor = { handedThrough: () => 0, committed: () => undefined } as unknown as PageCursor;
  return { state: new RunState(writer, sink, summary, batchSize, cursor, () => undefined), summary };
}

/** What RunState stages for a page, and the records it skips with their reasons. */
async function staged(records: unknown[], bytes: Buffer, ranges: number[], extras?: Array<Array<string | null> | undefined>) {
  const rows: WriteRow[] = [];
  // As the SQLite sinks take them: rows (the reader's records straight from their fields, write-row.ts).
  const sink = {
    kind: "worker", stage: (calls: PendingCall[]) => void rows.push(...calls.map(toWriteRow)), stageRows: (staged: WriteRow[]) => void rows.push(...staged),
    commit: async () => ({ inserted: 0, updated: 0, refused: [], ms: 0 }), saveProgress: () => undefined, close: async () => undefined,
  } as WriteSink;
  const writer = { storedCount: () => 0, findMany: () => [], ongoingSessionIds: () => [] } as unknown as StoredCalls;
  const { state, summary } = runState(writer, sink, 1e9);
  const result = await state.handle(records, { bytes, ranges }, extras);
  return { rows, skipped: summary.skippedRecords, count: summary.skipped, result };
}

/** Both paths over one page: the JSON path (JSON.parse of the page's UTF-8 text) and the reader. */
async function expectSameRows(bytes: Buffer) {
  const ranges = arrayMemberRanges(bytes, "data")!;
  const whole = (JSON.parse(bytes.toString("utf8")) as { data: unknown[] }).data;
  const read = readCallsPage(bytes, 1000);
  expect(read).toBeDefined();
  expect(read!.ranges).toEqual(ranges);
  const before = await staged(whole, bytes, ranges);
  const after = await staged(read!.records, bytes, read!.ranges, read!.extras);
  expect(after.rows.length).toBe(before.rows.length);
  // toEqual compares primitives with Object.is: 0 and -0 differ, as do 1 and "1".
  for (let i = 0; i < before.rows.length; i++) expect(after.rows[i]).toEqual(before.rows[i]);
  expect(after.skipped).toEqual(before.skipped);
  expect(after.count).toBe(before.count);
  expect(after.result).toEqual(before.result);
  return { before, read: read! };
}

describe("reading a page from its bytes", () => {
  it("stages the same rows as JSON.parse for every data mix and its invalid records", async () => {
    const records = mixRecords();
    for (let at = 0; at < records.length; at += 250) {
      const chunk = records.slice(at, at + 250);
      const { before, read } = await expectSameRows(pageOf(chunk));
      expect(before.rows.length).toBeGreaterThan(chunk.length - 10);
      // The records were read by their fields, not whole (the invalid ones aside).
      expect(read.extras.filter((e) => e === undefined).length).toBeLessThan(10);
    }
  });

  it("stages the same rows and refuses the same records for hand-written quirks", async () => {
    const { before, read } = await expectSameRows(pageOf([...HOSTILE_RECORDS, INVALID_UTF8]));
    expect(before.count).toBeGreaterThanOrEqual(17);
    // Whole only where a known field holds an object or array, a participant is not an
    // object, the record is not an object, or its bytes are not UTF-8.
    const whole = read.extras.map((e, i) => (e === undefined ? i : -1)).filter((i) => i >= 0);
    expect(whole.length).toBeLessThanOrEqual(10);
    expect(whole).toContain(HOSTILE_RECORDS.length); // the invalid UTF-8 record
  });

  it("stages the same rows for pretty-printed pages", async () => {
    const records = [...mixRecords().slice(0, 40), ...HOSTILE_RECORDS].map((t) => {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        return t;
      }
    });
    await expectSameRows(pageOf(records, " ,\n\t"));
  });

  it("stores byte-identical rows through the write worker from both readings", async () => {
    const pages = [pageOf(mixRecords().slice(0, 300)), pageOf([...HOSTILE_RECORDS, INVALID_UTF8]), pageOf(mixRecords().slice(300, 600))];
    const store = async (name: string, read: (bytes: Buffer) => { records: unknown[]; ranges: number[]; extras?: Array<Array<string | null> | undefined> }) => {
      const db = openDatabase(path.join(dir, `${name}.db`));
      const app = await addApp(db, { appId: "app1", name: "app", region: "us", apiKey: "k".repeat(32), callsUrl: "http://127.0.0.1:9" });
      const sink = workerSink(db, app.pk)!;
      const { state, summary } = runState(new CallWriter(db, app.pk), sink, 250);
      // Each page's own copy: the worker takes a page's memory over.
      for (const bytes of pages) {
        const own = Buffer.from(bytes);
        const r = read(own);
        await state.handle(r.records, { bytes: own, ranges: r.ranges }, r.extras);
      }
      await state.drain();
      await sink.close();
      // The stamps (first_seen_ms, updated_ms) are the worker's clock at each write
      // transaction: compared by their rank (which batch), not their value.
      for (const col of ["first_seen_ms", "updated_ms"]) {
        db.$client.exec(`UPDATE calls SET ${col} = (SELECT count(DISTINCT c.${col}) FROM calls c WHERE c.${col} < calls.${col})`);
      }
      const all = (sql: string) => db.$client.prepare(sql).raw().all();
      const out = {
        calls: all("SELECT *, typeof(raw), hex(raw) FROM calls ORDER BY pk"),
        participants: all("SELECT *, typeof(raw), hex(uid), hex(raw) FROM call_participants ORDER BY call_pk, seq"),
        changes: all("SELECT * FROM analytics_changes ORDER BY seq"),
        skipped: summary.skippedRecords,
      };
      db.$client.close();
      return out;
    };
    const before = await store("json", (bytes) => ({ records: (JSON.parse(bytes.toString("utf8")) as { data: unknown[] }).data, ranges: arrayMemberRanges(bytes, "data")! }));
    const after = await store("bytes", (bytes) => readCallsPage(bytes, 1000)!);
    expect(before.calls.length).toBeGreaterThan(500);
    expect(before.participants.length).toBeGreaterThan(1500);
    expect(after).toEqual(before);
  });
});
