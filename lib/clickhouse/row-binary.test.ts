import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { migrateClickHouse } from "./migrate";
import { insertRowBinary, rowBinaryEncoder, Writer } from "./row-binary";
import { callRow, deliveryRow, eventCountRow, recordingRow, type CallFact } from "./rows";
import { CALLS, EVENT_COUNTS, RECORDINGS, WEBHOOK_DELIVERIES } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";

/**
 * RowBinary must store exactly what the JSONEachRow path stores: the same rows (from the
 * builders of rows.ts, with every kind of value) inserted both ways into a real server
 * and read back.
 */
const call = (over: Partial<CallFact>): CallFact => ({
  appPk: 7, sessionId: "s", version: 1_795_000_000_123, mid: null, type: "video", mode: "meet", status: "ended",
  initiator: "ünï", receiver: "grp-😀", receiverType: "group", initiatedAt: 1_700_000_000, startedAt: null, endedAt: 1_700_000_900,
  startAt: 1_700_000_000, platformHasRecording: true, totalAudioMinutes: 1.5, totalVideoMinutes: 0.001, totalDurationMinutes: 12.345,
  durationSeconds: 741, totalParticipants: 2, source: "sync", contentHash: "h", raw: '{"a":"\\"quoted\\" \\n tab\\t ✓"}',
  firstSeenMs: 1, updatedMs: 1_795_000_000_123, arrival: 1_795_000_000_123_456,
  participants: [
    { seq: 0, uid: "alice", state: "ended", isJoined: true, totalAudioMinutes: 1.5, totalVideoMinutes: 0, totalDurationMinutes: 1.5, deviceId: "d-1", joinedAt: 1_700_000_001, leftAt: 1_700_000_091, mid: "m", raw: null },
    { seq: 1, uid: "bob\u0000nul", state: null, isJoined: false, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDurationMinutes: 0, deviceId: null, joinedAt: null, leftAt: null, mid: null, raw: '{"x":1}' },
  ],
  ...over,
});

describe.skipIf(CLICKHOUSE_SKIP_REASON)("RowBinary inserts", () => {
  let server: TestClickHouse;
  let json: ClickHouse;
  let binary: ClickHouse;

  beforeAll(async () => {
    server = await startClickHouse();
    for (const db of ["rb_json", "rb_binary"]) await migrateClickHouse(server.config(db));
    json = openClickHouse(server.config("rb_json"));
    binary = openClickHouse(server.config("rb_binary"));
  });
  afterAll(async () => {
    await json?.close();
    await binary?.close();
    await server?.stop();
  });

  const readAll = (c: ClickHouse, table: string, order = "app_pk, session_id") => c.rows(`SELECT * FROM ${table} ORDER BY ${order}`);

  it("stores calls exactly as JSONEachRow does (nulls, negative and 64-bit integers, unicode, empty arrays)", async () => {
    const rows = [
      callRow(call({ sessionId: "a" })),
      callRow(call({ sessionId: "b", participants: [], raw: null, contentHash: null, startAt: -5, initiatedAt: -5 })),
      callRow(call({ sessionId: "c".repeat(300), raw: "x".repeat(70_000), totalAudioMinutes: 123456.789 })),
    ];
    await json.insert("calls", rows);
    const enc = rowBinaryEncoder(CALLS);
    const w = new Writer(64); // small: the writer must grow
    for (const r of rows) enc.write(w, r);
    await binary.insertStream("calls", Readable.from([w.take()]), { format: "RowBinary", columns: enc.columns });
    const back = await readAll(binary, "calls");
    expect(back).toHaveLength(3);
    expect(back).toEqual(await readAll(json, "calls"));
  });

  it("stores recordings (a negative start key, a fractional duration) exactly as JSONEachRow does", async () => {
    const rows = [
      recordingRow({ appPk: 1, sessionId: "r1", recordingUrl: "https://x.test/1.mp4", recordingDate: null, duration: 61.5, startTime: null, receivedMs: 1_795_000_000_000 }),
      recordingRow({ appPk: 1, sessionId: "r2", recordingUrl: "https://x.test/2.mp4", recordingDate: "2026-01-01", duration: null, startTime: 1_700_000_000, receivedMs: 1 }),
    ];
    await json.insert("recordings", rows);
    const enc = rowBinaryEncoder(RECORDINGS);
    const w = new Writer();
    for (const r of rows) enc.write(w, r);
    await binary.insertStream("recordings", Readable.from([w.take()]), { format: "RowBinary", columns: enc.columns });
    expect(await readAll(binary, "recordings")).toEqual(await readAll(json, "recordings"));
  });

  it("stores event counts and webhook deliveries (bodies with every kind of character) exactly as JSONEachRow does", async () => {
    const counts = [eventCountRow({ appPk: 3, trigger: "message_sent", bucketStart: 1_700_000_100, count: 12 }), eventCountRow({ appPk: 3, trigger: "x", bucketStart: 0, count: 2 ** 40 })];
    const body = JSON.stringify({ trigger: "message_sent", data: { text: "a\u0000b\n\"c\" ✓ 😀 \\ end" }, appId: "acme" });
    const deliveries = [
      deliveryRow({ appPk: 3, idemKey: "k1", trigger: "message_sent", category: "chat", webhook: "w", type: null, sessionId: null, outcome: "applied", body, receivedMs: 1_795_000_000_000, bucketStart: 1_794_999_600, repeatCount: 0, lastReceivedMs: 1_795_000_000_000 }),
      deliveryRow({ appPk: 3, idemKey: "k2", trigger: "call_ended", category: "call", webhook: "w", type: "call", sessionId: "s1", outcome: "failed", body: "{}", receivedMs: 1, bucketStart: 0, repeatCount: 4, lastReceivedMs: 9 }),
    ];
    await json.insert("event_counts", counts);
    await json.insert("webhook_deliveries", deliveries);
    await insertRowBinary(binary, EVENT_COUNTS, counts);
    await insertRowBinary(binary, WEBHOOK_DELIVERIES, deliveries);
    expect(await readAll(binary, "event_counts", "app_pk, trigger")).toEqual(await readAll(json, "event_counts", "app_pk, trigger"));
    const back = await readAll(binary, "webhook_deliveries", "idem_key");
    expect(back).toEqual(await readAll(json, "webhook_deliveries", "idem_key"));
    expect((back[0] as { body: string }).body).toBe(body);
  });

  it("refuses a value it cannot represent instead of writing a wrong one", () => {
    const w = new Writer();
    expect(() => w.i64(2 ** 53)).toThrow(/safe integer/);
    expect(() => w.i64(1.5)).toThrow(/safe integer/);
    expect(() => rowBinaryEncoder({ ...CALLS, columns: [["x", "Decimal(9, 2)"]] })).toThrow(/no encoder/);
  });
});
