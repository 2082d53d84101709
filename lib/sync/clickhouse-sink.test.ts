import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import type { CallWriterV2 } from "@/lib/clickhouse/writer-v2";
import type { ClickHouse } from "@/lib/clickhouse/client";
import { parseCallRecord } from "@/lib/platform/call-record";
import { ClickHouseCalls, nextArrival } from "./clickhouse-sink";
import { contentHash, type PendingCall } from "./pending-rows";

/**
 * The sink's flow control, against a ClickHouse that takes the insert body slowly (a real
 * stream read at a fixed pace): the sync must wait for it rather than buffer a batch.
 * What the sink writes is checked against real servers in clickhouse-sync.integration.test.ts.
 */
process.env.AUTH_SECRET ??= "sink-test-secret-at-least-32-characters-long";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function db(): Db {
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-sink-"));
  dirs.push(dir);
  return openDatabase(path.join(dir, "warehouse.db"));
}

/** A page of `n` calls, each with a raw record of about 3 KB. */
function page(from: number, n: number): PendingCall[] {
  return Array.from({ length: n }, (_, i) => {
    const raw = {
      sessionId: `s-${from + i}`, type: "audio", mode: "call", status: "ended", initiator: "a", receiver: "b", receiverType: "user",
      initiatedAt: 1_700_000_000, startedAt: 1_700_000_001, endedAt: 1_700_000_100, hasRecording: false, totalAudioMinutes: 1.5,
      totalVideoMinutes: 0, totalDurationInMinutes: 1.5, totalDuration: "00:01:39", totalParticipants: 1, note: "x".repeat(3000),
      participants: [{ uid: "a", state: "ended", isJoined: true, totalAudioMinutes: 1.5, totalVideoMinutes: 0, totalDuration: 1.5 }],
    };
    const parsed = parseCallRecord(raw);
    if (!parsed.ok) throw new Error(parsed.reason);
    const rawJson = JSON.stringify(raw);
    return { call: parsed.call, rawJson, hash: contentHash(rawJson), participantExtras: [null] };
  });
}

/** A ClickHouse whose inserts read 64 KB every 5 ms (about 13 MB/s). */
function slowClickHouse(read: { bytes: number }): ClickHouse {
  const refuse = () => Promise.reject(new Error("not used"));
  return {
    label: "slow", placement: { database: "db", cluster: undefined },
    command: refuse, rows: refuse, insert: refuse, close: async () => undefined,
    stream: () => ({ [Symbol.asyncIterator]: () => ({ next: refuse }) }),
    streamRowBinary: () => ({ [Symbol.asyncIterator]: () => ({ next: refuse }) }),
    insertStream: async (_table: string, body: Readable) => {
      body.pause();
      for (;;) {
        await new Promise((r) => setTimeout(r, 5));
        const chunk = body.read(64 * 1024) ?? body.read();
        if (chunk) read.bytes += (chunk as Buffer).length;
        else if (body.readableEnded || (body.readableLength === 0 && (body as Readable & { writableEnded?: boolean }).writableEnded)) return;
      }
    },
  };
}

describe("ClickHouse sink flow control", () => {
  it("makes the sync wait for a slow ClickHouse instead of buffering the batch", async () => {
    const read = { bytes: 0 };
    // v1's streamed insert (v1 written beside v2) is the flow control under test; v2's writer (its own tests) accepts every batch.
    const acceptingWriter = { write: async (_app: number, batch: readonly unknown[]) => ({ written: batch.length, completed: 0, stored: new Map() }) } as unknown as CallWriterV2;
    const sink = new ClickHouseCalls(slowClickHouse(read), db(), 1, { writeV1Facts: true, writerV2: async () => acceptingWriter });
    let peak = 0;
    let staged = 0;
    for (let p = 0; p < 20; p++) {
      sink.stage(page(p * 1000, 1000)); // about 3 MB each
      staged += 1000;
      const buffered = (sink as unknown as { current?: { body: { writableLength: number; readableLength: number } } }).current?.body;
      peak = Math.max(peak, (buffered?.writableLength ?? 0) + (buffered?.readableLength ?? 0));
      await sink.drained();
    }
    const result = await sink.commit();
    expect(result).toMatchObject({ inserted: staged, updated: 0 });
    // 60 MB were staged; never more than the 8 MB window (twice: both sides of the pipe)
    // and two pages (the one staged, the encoder's buffer) were held, against 60 MB unbounded.
    expect(read.bytes).toBeGreaterThan(58_000_000);
    expect(peak).toBeLessThan(16 * 1024 * 1024 + 8_000_000);
  });
});

describe("the arrival clock", () => {
  it("numbers calls strictly increasing, above the wall clock in microseconds' scale and every SQLite pk, as safe integers", () => {
    const before = Date.now() * 1000;
    let last = nextArrival();
    expect(last).toBeGreaterThanOrEqual(before);
    // Far faster than a thousand a millisecond: the clock runs ahead by one each, never repeats.
    let notAfter = 0;
    for (let i = 0; i < 200_000; i++) {
      const next = nextArrival();
      if (next <= last) notAfter++;
      last = next;
    }
    expect(notAfter).toBe(0);
    expect(Number.isSafeInteger(last)).toBe(true);
  });
});
