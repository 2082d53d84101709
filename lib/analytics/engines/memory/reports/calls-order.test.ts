import { parse } from "csv-parse/sync";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { CALL_RAW_COLUMNS } from "../../../csv-columns";
import { csvContext, csvRawStream } from "@/lib/export/csv";
import { callsOrder } from "./calls";
import { visibleApps } from "../../../scope";
import { callsCsvBatches, callsCsvLines, callsCsvOrder, storeRows } from "./calls-csv";
import { handleReport } from "../test-route";
import * as A from "../direct";
import { sortWindow, windowCopy } from "../scan/order";
import type { HeadFirstOrder } from "../report-answerer";
import { REPORT_ANSWERERS } from "../report-answerers";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "../../../test-fixtures";

/**
 * The calls list and its CSV are ordered by the in-memory store (order.ts) and read from
 * SQLite by pk. The oracle is the SQL they replaced: `ORDER BY <key> <dir>, pk <dir>` over
 * `calls` with the filters written as plain SQL here — on data built for ties (a narrow
 * start range, zero durations and minutes, 0.1 + 0.2 against 0.3 minutes).
 */

type Db = ReturnType<typeof openDatabase>;
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 5, 1) / 1000;
const SORT_SQL = { start: "c.start_at", duration: "c.duration_seconds", participants: "c.total_participants", minutes: "(c.total_audio_minutes + c.total_video_minutes)" };

function fixtureCalls(seed: number, n: number, from: number): FixtureCall[] {
  const r = rng(seed);
  // Two hours for 1,500 calls: many calls share a start second.
  const calls = Array.from({ length: n }, (_, i) => randomCall(r, i + from, base, 2 * 3600));
  // Minutes whose double sums differ although the decimals agree (0.1 + 0.2 > 0.3).
  const minutes: Array<[number, number]> = [[0.1, 0.2], [0.3, 0], [0, 0.3], [0.2, 0.1], [1.1, 2.2], [3.3, 0], [0.7, 0.1], [0.8, 0]];
  calls.forEach((c, i) => {
    if (i % 5 === 0) [c.audio, c.video] = minutes[(i / 5) % minutes.length];
  });
  return calls;
}

/** The old SQL order of the filtered calls: pks, and the CSV's columns of each. */
function oracle(db: Db, f: A.Filters): { pks: number[]; rows: unknown[][] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const eq = (col: string, v: unknown) => {
    where.push(`${col} = ?`);
    params.push(v);
  };
  if (f.apps.length) {
    where.push(`c.app_pk IN (SELECT pk FROM apps WHERE app_id IN (${f.apps.map(() => "?").join(", ")}))`);
    params.push(...f.apps);
  }
  if (f.type) eq("c.type", f.type);
  if (f.mode) eq("c.mode", f.mode);
  if (f.status) eq("c.status", f.status);
  if (f.receiverType) eq("c.receiver_type", f.receiverType);
  if (f.hasRecording !== undefined) eq("c.has_recording", f.hasRecording ? 1 : 0);
  if (f.participantsCount !== undefined) eq("c.total_participants", f.participantsCount);
  if (f.uid !== undefined) {
    where.push("EXISTS (SELECT 1 FROM call_participants p WHERE p.call_pk = c.pk AND p.uid = ?)");
    params.push(f.uid);
  }
  if (f.from !== undefined) {
    where.push("c.start_at >= ?");
    params.push(f.from);
  }
  if (f.to !== undefined) {
    where.push("c.start_at < ?");
    params.push(f.to);
  }
  const dir = f.order === "asc" ? "ASC" : "DESC";
  const rows = db.$client
    .prepare(`SELECT a.app_id, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
        c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
        c.duration_seconds, c.total_participants, c.pk
      FROM calls c JOIN apps a ON a.pk = c.app_pk ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${SORT_SQL[f.sort]} ${dir}, c.pk ${dir}`)
    .raw()
    .all(...params) as unknown[][];
  return { pks: rows.map((r) => r[18] as number), rows: rows.map((r) => r.slice(0, 18)) };
}

const FILTERS: Array<Partial<A.Filters>> = [
  {}, { type: "video" }, { apps: ["app-two"] }, { uid: "alice" }, { uid: "a,b", status: "ended" }, { from: base + 1800, to: base + 5400 },
  { participantsCount: 2 }, { status: "ended", hasRecording: true }, { mode: "meet", receiverType: "group" }, { uid: "nobody" }, { from: base + 999_999 },
];

/** Session ids of a page (the list's rows carry no pk). */
const sessionIds = (p: A.Page<A.CallListRow>) => p.data.map((c) => `${c.app}/${c.sessionId}`);

function checkAllOrders(db: Db, label: string): void {
  const appOf = new Map((db.$client.prepare("SELECT pk, app_id FROM apps").raw().all() as Array<[number, string]>).map(([pk, id]) => [pk, id]));
  const sessionOf = new Map((db.$client.prepare("SELECT pk, app_pk, session_id FROM calls").raw().all() as Array<[number, number, string]>).map(([pk, app, s]) => [pk, `${appOf.get(app)}/${s}`]));
  for (const partial of FILTERS) {
    for (const sort of A.SORT_KEYS) {
      for (const order of ["asc", "desc"] as const) {
        const f = A.filters({ ...partial, sort, order });
        const tag = `${label} ${JSON.stringify(partial)} ${sort} ${order}`;
        const want = oracle(db, f).pks.map((pk) => sessionOf.get(pk)!);
        // Pages of 7: first, second, one in the middle, the last (partial), one past the end.
        const perPage = 7;
        const pages = Math.ceil(want.length / perPage);
        for (const page of [1, 2, Math.max(1, Math.floor(pages / 2)), Math.max(1, pages), pages + 1, pages + 50]) {
          const got = A.getCalls(db, { ...f, page, perPage }, ALL);
          expect(got.meta.pagination.total, tag).toBe(want.length);
          expect(got.meta.pagination.total_pages, tag).toBe(pages);
          expect(sessionIds(got), `${tag} page ${page}`).toEqual(want.slice((page - 1) * perPage, page * perPage));
        }
        // The whole list in one page, and the CSV's order (in-process, and handed over as the worker would).
        expect(sessionIds(A.getCalls(db, { ...f, perPage: 1000, page: 1 }, ALL)), tag).toEqual(want.slice(0, 1000));
        expect([...A.iterateCalls(db, f, ALL)].map((c) => `${c.app}/${c.sessionId}`), tag).toEqual(want);
        const pks = callsOrder(db, f, ALL);
        expect([...A.iterateCallsRaw(db, f, ALL, pks)].map((r) => `${r[0]}/${r[1]}`), tag).toEqual(want);
      }
    }
  }
}

describe("calls list and CSV ordered by the store", () => {
  const db = openFixtureDb("calls-order");
  const writer = openDatabase(db.$client.name);
  afterAll(() => {
    writer.$client.close();
    db.$client.close();
  });
  writeCalls(writer, fixtureCalls(11, 1500, 0));

  it("pages and the full order match ORDER BY key, pk (asc and desc, every key, filters, ties, deep pages)", () => {
    checkAllOrders(db, "initial");
  });

  it("stays exact after re-syncs and deletes by another connection (store catch-up)", () => {
    const again = fixtureCalls(12, 1500, 0).slice(0, 400); // same session ids: upserts with new values
    writeCalls(writer, [...again, ...fixtureCalls(13, 300, 5000)]);
    writer.$client.exec("DELETE FROM calls WHERE pk % 17 = 0");
    checkAllOrders(db, "after writes");
  });

  it("the CSV of the calls list writes the old SQL's rows in the old order", async () => {
    const caller = { userId: 1, email: "t@example.com", role: "admin" as const, appPks: "all" as const };
    for (const q of ["sort=minutes&order=asc", "sort=start", "sort=participants&order=asc&type=video", "sort=duration&uid=alice"]) {
      const res = await handleReport(new Request(`http://x/api/v1/calls?${q}&format=csv`), REPORT_ANSWERERS.calls, { db: () => db, authorize: async () => caller });
      const got = await res.text();
      const f = A.parseFilters(new URLSearchParams(q));
      const want = await new Response(csvRawStream([oracle(db, f).rows], CALL_RAW_COLUMNS)).text();
      expect(got, q).toBe(want);
      expect((parse(got, { columns: true }) as unknown[]).length, q).toBe(oracle(db, f).pks.length);
    }
  });
});

/** The CSV the old SQL writes for `pks` in that order, each call as SQLite holds it now (deleted ones left out). */
async function csvOfPks(db: Db, pks: ArrayLike<number>): Promise<string> {
  const stmt = db.$client
    .prepare(`SELECT a.app_id, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
        c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
        c.duration_seconds, c.total_participants FROM calls c JOIN apps a ON a.pk = c.app_pk WHERE c.pk = ?`)
    .raw();
  const rows = Array.from(pks, (pk) => stmt.get(pk) as unknown[] | undefined).filter((r) => r !== undefined);
  return new Response(csvRawStream([rows], CALL_RAW_COLUMNS)).text();
}

const csvText = (batches: ReturnType<typeof callsCsvBatches>) => new Response(csvRawStream(batches, CALL_RAW_COLUMNS)).text();

/**
 * What the worker's `order` job computes (`callsCsvOrder`: the head with its store
 * values, then the whole order, right after) as the request's thread gets it — except
 * that the whole order is held back until `release()`: the test decides when it "arrives".
 */
function gatedOrder(db: Db, f: A.Filters) {
  const o = callsCsvOrder(db, f, ALL);
  const head = o.head.slice();
  const whole = o.all();
  let release!: () => void;
  const state = { released: false };
  const gate = new Promise<void>((r) => (release = r));
  const order: HeadFirstOrder = { head, headValues: o.values, all: gate.then(() => ((state.released = true), whole)) };
  return { order, head, whole, release, state };
}

async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>, chunks: Uint8Array[]): Promise<string> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Data lines in a chunk that starts with the header. */
const rowsInFirst = (chunk: Uint8Array) => new TextDecoder().decode(chunk).split("\r\n").length - 2;

describe("calls CSV rows from the store and SQLite", () => {
  const db = openFixtureDb("calls-csv");
  const writer = openDatabase(db.$client.name);
  afterAll(() => {
    writer.$client.close();
    db.$client.close();
  });
  writeCalls(writer, fixtureCalls(21, 3000, 0));
  // Text the CSV must quote or neutralise, and dims the store only knows as "other" (NULL, unknown).
  const w = writer.$client;
  w.prepare("UPDATE calls SET initiator = ?, receiver = ? WHERE pk % 7 = 1").run('=cmd|" /C calc"!A0', "a,b\nc");
  w.prepare("UPDATE calls SET initiator = ?, receiver = ? WHERE pk % 7 = 2").run("zoë 用户42 🦄", "-x");
  w.exec("UPDATE calls SET type = NULL WHERE pk % 11 = 0; UPDATE calls SET status = 'weird' WHERE pk % 13 = 0; UPDATE calls SET receiver_type = NULL, session_id = '+' || session_id WHERE pk % 17 = 0");
  w.exec("UPDATE calls SET total_duration_minutes = total_duration_minutes + 0.0004, total_audio_minutes = total_audio_minutes + 1e-7 WHERE pk % 19 = 0");

  /** The worker's `values` job, answered from this thread's store (not caught up: a stale snapshot stays stale). */
  const worker = (_pks: ArrayLike<number>) => async (p: Int32Array | Float64Array) => storeRows(db, p);
  const queries = [A.filters(), A.filters({ sort: "minutes", order: "asc" }), A.filters({ type: "video", sort: "duration" }), A.filters({ uid: "alice" })];

  it("writes the old SQL's bytes in-process, with the worker's values, and without them", async () => {
    for (const f of queries) {
      const pks = callsOrder(db, f, ALL);
      const want = await csvOfPks(db, pks);
      expect(want.split("\r\n").length, JSON.stringify(f)).toBeGreaterThan(2);
      expect(await csvText(callsCsvBatches(db, f, ALL)), JSON.stringify(f)).toBe(want);
      expect(await csvText(callsCsvBatches(db, f, ALL, pks, worker(pks))), JSON.stringify(f)).toBe(want);
      expect(await csvText(callsCsvBatches(db, f, ALL, pks)), JSON.stringify(f)).toBe(want);
      // A worker that cannot answer: rows read whole.
      expect(await csvText(callsCsvBatches(db, f, ALL, pks, async () => undefined)), JSON.stringify(f)).toBe(want);
    }
  });

  it("shows a call's current values when it changed after the store's snapshot, and drops deleted calls", async () => {
    const f = A.filters({ sort: "minutes" });
    const pks = callsOrder(db, f, ALL); // the store is current here, and not caught up again below
    w.exec("UPDATE calls SET status = 'rejected', total_video_minutes = 7.125, duration_seconds = 1, has_recording = 1 - has_recording WHERE pk % 5 = 0");
    w.exec("UPDATE calls SET type = 'video', initiator = 'later' WHERE pk % 23 = 0; DELETE FROM calls WHERE pk % 29 = 0");
    const want = await csvOfPks(db, pks);
    expect(await csvText(callsCsvBatches(db, f, ALL, pks, worker(pks)))).toBe(want);
    // Changes written while the CSV streams: each batch reads the log after the last it saw.
    const reader = csvRawStream(callsCsvBatches(db, f, ALL, pks, worker(pks)), CALL_RAW_COLUMNS).getReader();
    const chunks: Uint8Array[] = [(await reader.read()).value!];
    w.exec("UPDATE calls SET mode = 'meet', total_participants = 9 WHERE pk % 3 = 0");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const first = new TextDecoder().decode(chunks[0]);
    const firstRows = first.split("\r\n").length - 2; // header, trailing empty
    const wantLater = (await csvOfPks(db, pks)).split("\r\n");
    const got = new TextDecoder().decode(Buffer.concat(chunks)).split("\r\n");
    expect(got.slice(firstRows + 1)).toEqual(wantLater.slice(firstRows + 1));
    expect(got.slice(0, firstRows + 1)).toEqual(want.split("\r\n").slice(0, firstRows + 1));
  });

  it("in-process, sends the order's head first and the rest in the same order, whatever runs in between", async () => {
    for (const f of [A.filters({ sort: "minutes" }), A.filters({ sort: "start", order: "asc", type: "audio" })]) {
      const pks = callsOrder(db, f, ALL);
      expect(pks.length).toBeGreaterThan(600); // more than the first batch
      const before = (await csvOfPks(db, pks)).split("\r\n");
      const reader = csvRawStream(callsCsvBatches(db, f, ALL), CALL_RAW_COLUMNS).getReader();
      const chunks: Uint8Array[] = [(await reader.read()).value!];
      // Between the head and the rest: other orders taken on this thread (the scratch
      // arrays reused), writes that reorder calls, and the store catching up on them.
      A.getCalls(db, { ...A.filters({ sort: "duration", order: "asc" }), page: 3 }, ALL);
      callsOrder(db, A.filters({ sort: "participants" }), ALL);
      w.exec("UPDATE calls SET total_audio_minutes = total_audio_minutes + 3, start_at = start_at - 500 WHERE pk % 6 = 0");
      A.getTotals(db, A.filters(), ALL);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      const got = new TextDecoder().decode(Buffer.concat(chunks)).split("\r\n");
      const firstRows = new TextDecoder().decode(chunks[0]).split("\r\n").length - 2;
      expect(firstRows, JSON.stringify(f)).toBeGreaterThan(0);
      expect(got.slice(0, firstRows + 1), JSON.stringify(f)).toEqual(before.slice(0, firstRows + 1));
      expect(got.slice(firstRows + 1), JSON.stringify(f)).toEqual((await csvOfPks(db, pks)).split("\r\n").slice(firstRows + 1));
    }
  });

  it("head first from the store's thread: the head's rows go out before the whole order is there, in the in-process bytes (every sort, both directions, filters)", async () => {
    const cases = [
      A.filters(), A.filters({ order: "asc" }), A.filters({ sort: "duration" }), A.filters({ sort: "duration", order: "asc", type: "video" }),
      A.filters({ sort: "participants", order: "asc" }), A.filters({ sort: "participants", status: "ended" }),
      A.filters({ sort: "minutes", order: "asc", uid: "alice" }), A.filters({ sort: "minutes", mode: "meet", hasRecording: true }),
      A.filters({ sort: "start", order: "asc", apps: ["app-two"], from: base + 1800 }), A.filters({ from: base + 1800, to: base + 1860 }), // fewer rows than a head
      A.filters({ participantsCount: 99 }), // none
    ];
    let heads = 0;
    for (const f of cases) {
      const tag = JSON.stringify(f);
      const inProcess = await csvText(callsCsvBatches(db, f, ALL));
      const { order, head, whole, release, state } = gatedOrder(db, f);
      // The head is the order's first batch, and the whole order starts with it.
      expect(Array.from(whole), tag).toEqual(Array.from(callsOrder(db, f, ALL)));
      expect(head.length, tag).toBe(Math.min(256, whole.length));
      expect(Array.from(whole.subarray(0, head.length)), tag).toEqual(Array.from(head));
      const reader = csvRawStream(callsCsvBatches(db, f, ALL, order, worker(whole)), CALL_RAW_COLUMNS).getReader();
      const chunks: Uint8Array[] = [];
      if (head.length > 0) {
        // The header and the head's rows, while the whole order is still held back (a
        // source that waited for it would never answer this read).
        chunks.push((await reader.read()).value!);
        expect(state.released, tag).toBe(false);
        expect(rowsInFirst(chunks[0]), tag).toBe(head.length);
        heads++;
      }
      release();
      expect(await readAll(reader, chunks), tag).toBe(inProcess);
      expect(inProcess.split("\r\n").length - 2, tag).toBe(whole.length);
    }
    expect(heads).toBeGreaterThan(5);
  });

  it("head first, with writes between the head and the rest: the rest shows the calls' current values", async () => {
    const f = A.filters({ sort: "minutes", order: "asc" });
    const { order, whole, release } = gatedOrder(db, f);
    expect(whole.length).toBeGreaterThan(600);
    const before = (await csvOfPks(db, whole)).split("\r\n");
    const reader = csvRawStream(callsCsvBatches(db, f, ALL, order, worker(whole)), CALL_RAW_COLUMNS).getReader();
    const chunks: Uint8Array[] = [(await reader.read()).value!];
    const firstRows = rowsInFirst(chunks[0]);
    w.exec("UPDATE calls SET status = 'ended', type = NULL, total_video_minutes = 4.5, initiator = 'after the head' WHERE pk % 4 = 0; DELETE FROM calls WHERE pk % 31 = 0");
    release();
    const got = (await readAll(reader, chunks)).split("\r\n");
    expect(firstRows).toBe(256);
    expect(got.slice(0, firstRows + 1)).toEqual(before.slice(0, firstRows + 1));
    // The rest: the calls after the head, as SQLite holds them now (the deleted ones left out).
    expect(got.slice(firstRows + 1)).toEqual((await csvOfPks(db, whole.subarray(firstRows))).split("\r\n").slice(1));
  });

  it("reads batches of nearly contiguous pks along the table, and drops calls deleted in their range", async () => {
    // Calls written in time order, as a backfill writes them: a list by start walks the
    // pks nearly in order (one range read per batch); a filtered one skips some.
    const dense = openFixtureDb("calls-csv-dense");
    try {
      const r = rng(5);
      writeCalls(dense, Array.from({ length: 5000 }, (_, i) => randomCall(r, i, base, 30 * 86_400)).sort((a, b) => a.initiatedAt - b.initiatedAt));
      dense.$client.exec("UPDATE calls SET initiator = 'a,\"b\"', receiver = '=1+1' WHERE pk % 9 = 4");
      const denseWorker = async (p: Int32Array | Float64Array) => storeRows(dense, p);
      for (const f of [A.filters(), A.filters({ order: "asc" }), A.filters({ status: "ended" }), A.filters({ type: "video", order: "asc" })]) {
        const pks = callsOrder(dense, f, ALL);
        dense.$client.exec(`DELETE FROM calls WHERE pk IN (${pks[300]}, ${pks[301]}, ${pks[Math.floor(pks.length * 0.8)]})`);
        const want = await csvOfPks(dense, pks);
        expect(want.split("\r\n").length - 2, JSON.stringify(f)).toBe(pks.length - 3);
        expect(await csvText(callsCsvBatches(dense, f, ALL, pks, denseWorker)), JSON.stringify(f)).toBe(want);
      }
    } finally {
      dense.$client.close();
    }
  });

  it("writes the bytes of an independent rendering (csvRawStream's cells) in every zone, across DST, for odd text and numbers", async () => {
    // Calls around the 2025 DST changes (Europe, America) and in zones with 30 and 45 minute offsets.
    const zoned = openFixtureDb("calls-csv-zones");
    try {
      const r = rng(77);
      const edges = [Date.UTC(2025, 2, 30, 0, 30) / 1000, Date.UTC(2025, 9, 26, 0, 30) / 1000, Date.UTC(2025, 2, 9, 6, 30) / 1000, Date.UTC(2025, 10, 2, 5, 30) / 1000];
      writeCalls(zoned, Array.from({ length: 1200 }, (_, i) => randomCall(r, i, edges[i % edges.length] - 3 * 3600, 6 * 3600)));
      const z = zoned.$client;
      // Text that is quoted, neutralised or not ASCII; numbers SQLite keeps as text or as fractions; NULLs.
      z.exec(`UPDATE calls SET initiator = 'zoë,"用户"', receiver = '@home' WHERE pk % 5 = 1;
        UPDATE calls SET initiator = 42, receiver = '-7' WHERE pk % 5 = 2;
        UPDATE calls SET session_id = char(9) || session_id, initiator = NULL, receiver = 'a' || char(13) || 'b' WHERE pk % 5 = 3;
        UPDATE calls SET started_at = started_at + 0.5, total_duration_minutes = 123456.9995 WHERE pk % 7 = 1 AND started_at IS NOT NULL;
        UPDATE calls SET total_duration_minutes = -0.0004, ended_at = NULL WHERE pk % 7 = 2;
        UPDATE calls SET total_duration_minutes = 1e17 WHERE pk % 7 = 3;
        UPDATE calls SET receiver = 'a,b', session_id = session_id || '"x' WHERE pk % 5 = 4;
        UPDATE calls SET initiated_at = 'soon' WHERE pk % 97 = 4`);
      for (const tz of ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham"]) {
        for (const f of [A.filters({ tz }), A.filters({ tz, sort: "minutes", order: "asc" })]) {
          const pks = callsOrder(zoned, f, ALL);
          const stmt = z.prepare(`SELECT a.app_id, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
              c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
              c.duration_seconds, c.total_participants FROM calls c JOIN apps a ON a.pk = c.app_pk WHERE c.pk = ?`).raw();
          const rows = Array.from(pks, (pk) => stmt.get(pk) as unknown[]);
          const want = await new Response(csvRawStream([rows], CALL_RAW_COLUMNS, undefined, csvContext(tz))).text();
          expect(want, tz).toContain("'@home");
          expect(want, tz).toContain('"a,b"');
          expect(await csvText(callsCsvBatches(zoned, f, ALL)), `${tz} ${f.sort}`).toBe(want);
          const zonedWorker = async (p: Int32Array | Float64Array) => storeRows(zoned, p);
          expect(await csvText(callsCsvBatches(zoned, f, ALL, pks, zonedWorker)), `${tz} ${f.sort} (values from the worker)`).toBe(want);
          // The worker's own lines (its `lines` job), batch by batch, after the header.
          const apps = visibleApps(zoned, ALL).map((a) => [a.pk, a.appId] as [number, string]);
          const lines = [0, 700].map((a, k, starts) => callsCsvLines(zoned, pks.subarray(a, starts[k + 1] ?? pks.length), apps, tz));
          expect(new TextDecoder().decode(Buffer.concat(lines)), `${tz} ${f.sort} (the worker's lines)`).toBe(want.slice(want.indexOf("\r\n") + 2));
          // The same lines written into spent batches' buffers (csv-bytes.ts spareBuffer), full of old bytes, or too small to be used.
          const spent = [1 << 20, 16].map((size) => new Uint8Array(size).fill(0x3d).buffer);
          const reused = [0, 700].map((a, k, starts) => callsCsvLines(zoned, pks.subarray(a, starts[k + 1] ?? pks.length), apps, tz, spent[k]));
          if (pks.length > 0) expect(reused[0].buffer, "written into the spent buffer").toBe(spent[0]);
          expect(Buffer.concat(reused).equals(Buffer.concat(lines)), `${tz} ${f.sort} (into spent buffers)`).toBe(true);
        }
      }
    } finally {
      zoned.$client.close();
    }
  });

  it("reads rows whole when the change log was pruned past the store's snapshot", async () => {
    const f = A.filters({ sort: "duration", order: "asc" });
    const pks = callsOrder(db, f, ALL);
    w.exec("UPDATE calls SET status = 'unanswered', total_audio_minutes = 2.5 WHERE pk % 4 = 1");
    w.exec("DELETE FROM analytics_changes WHERE seq < (SELECT max(seq) FROM analytics_changes)"); // as the prune trigger would, much later
    expect(await csvText(callsCsvBatches(db, f, ALL, pks, worker(pks)))).toBe(await csvOfPks(db, pks));
  });
});

/** Ascending (key, slot) by a plain comparison sort. */
const reference = (keys: number[]) => keys.map((k, s) => [k, s] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));

/** Key distributions the sorts must handle, drawn from `r`. */
function keyShapes(r: () => number): Array<[string, (i: number) => number]> {
  return [
    ["few distinct", () => Math.floor(r() * 5)],
    ["all equal", () => 42],
    ["seconds over a year", () => 1_735_689_600 + Math.floor(r() * 31_536_000)],
    ["decimals", () => Math.round(r() * 1e6) / 1000 + Math.round(r() * 1e6) / 1000],
    ["skewed with huge outliers", () => (r() < 0.01 ? 1e300 * r() : r() < 0.5 ? 0 : r() * 1e-300)],
    ["negative and zero", (i) => (i % 3 === 0 ? -0 + 0 : -Math.floor(r() * 50))],
    ["nearly sorted", (i) => Math.floor(i / 3) + (r() < 0.1 ? 5 : 0)],
  ];
}

describe("windowCopy", () => {

  it("copies out exactly the wanted positions, sorted, and leaves its input as it was", () => {
    const shapes = keyShapes(rng(8));
    for (const [name, gen] of shapes) {
      for (const n of [1, 33, 500, 20_000]) {
        const keys = Array.from({ length: n }, (_, i) => gen(i));
        const want = reference(keys);
        for (const [lo, hi] of [[0, Math.min(n, 256)], [Math.max(0, n - 256), n], [0, n]]) {
          const K = Float64Array.from(keys);
          const S = Int32Array.from(keys, (_, i) => i);
          const w = windowCopy(K, S, n, lo, hi);
          expect(Array.from(w.slots), `${name} n=${n} [${lo}, ${hi})`).toEqual(want.slice(lo, hi).map(([, s]) => s));
          expect(Array.from(K), name).toEqual(keys); // untouched
          expect(Array.from(S), name).toEqual(keys.map((_, i) => i));
        }
      }
    }
  });
});

describe("sortWindow", () => {

  it("puts exactly the wanted positions in order, for any key shape and window", () => {
    const shapes = keyShapes(rng(7));
    for (const [name, gen] of shapes) {
      for (const n of [1, 2, 31, 33, 500, 20_000]) {
        const keys = Array.from({ length: n }, (_, i) => gen(i));
        const want = reference(keys);
        const windows: Array<[number, number]> = [[0, n], [0, Math.min(n, 50)], [Math.max(0, n - 50), n], [Math.floor(n / 3), Math.floor(n / 3) + 7], [n - 1, n]];
        for (const [lo, hiWanted] of windows) {
          const hi = Math.min(n, hiWanted);
          const K = Float64Array.from(keys);
          const S = Int32Array.from(keys, (_, i) => i);
          sortWindow(K, S, n, lo, hi);
          const got = Array.from({ length: Math.max(0, hi - lo) }, (_, k) => [K[lo + k], S[lo + k]]);
          expect(got, `${name} n=${n} [${lo}, ${hi})`).toEqual(want.slice(lo, hi).map(([k, s]) => [k, s]));
        }
      }
    }
  });
});
