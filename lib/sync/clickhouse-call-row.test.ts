import { isUtf8 } from "node:buffer";
import { describe, expect, it } from "vitest";
import { rowBinaryEncoder, Writer } from "@/lib/clickhouse/row-binary";
import { callRow, type CallFact, type ParticipantFact } from "@/lib/clickhouse/rows";
import { CALLS } from "@/lib/clickhouse/schema";
import { parseCallRecord } from "@/lib/platform/call-record";
import { writeCallRow } from "./clickhouse-call-row";
import { contentHash, extraParticipantJson, PART_WIDTH, resolveRawTexts, toWriteRow, W, type PendingCall, type WriteRow } from "./pending-rows";

/**
 * The sync's direct RowBinary encoding of a call (clickhouse-call-row.ts) against the path
 * it replaced: the call as a WriteRow (toWriteRow), its raw record decoded to text, built
 * into the call's object (rows.ts) and encoded by the encoder compiled from the schema. The bytes must be identical, for raw
 * records left in the page (valid UTF-8 or not) and given as text. What those bytes store
 * on a real server is checked by row-binary.test.ts and clickhouse-sync.integration.test.ts.
 */

/** The row as the sink built it before session 8 (its `toFact`), encoded by the schema's encoder. */
function reference(appPk: number, r: WriteRow, version: number, firstSeenMs: number, arrival: number): Buffer {
  const participants: ParticipantFact[] = [];
  for (let j = 0, o = W.parts; j < (r[W.participantCount] as number); j++, o += PART_WIDTH) {
    participants.push({
      seq: r[o] as number, uid: r[o + 1] as string, state: r[o + 2] as string | null, isJoined: r[o + 3] === 1,
      totalAudioMinutes: r[o + 4] as number, totalVideoMinutes: r[o + 5] as number, totalDurationMinutes: r[o + 6] as number,
      deviceId: r[o + 7] as string | null, joinedAt: r[o + 8] as number | null, leftAt: r[o + 9] as number | null,
      mid: r[o + 10] as string | null, raw: r[o + 11] as string | null,
    });
  }
  const t = (i: number) => r[i] as string | null;
  const n = (i: number) => r[i] as number | null;
  const fact: CallFact = {
    appPk, sessionId: r[W.sessionId] as string, version, mid: t(W.mid), type: t(W.type), mode: t(W.mode), status: t(W.status),
    initiator: t(W.initiator), receiver: t(W.receiver), receiverType: t(W.receiverType), initiatedAt: n(W.initiatedAt),
    startedAt: n(W.startedAt), endedAt: n(W.endedAt), startAt: r[W.startAt] as number, platformHasRecording: r[W.hasRecording] === 1,
    totalAudioMinutes: r[W.audio] as number, totalVideoMinutes: r[W.video] as number, totalDurationMinutes: r[W.durationMinutes] as number,
    durationSeconds: r[W.durationSeconds] as number, totalParticipants: r[W.totalParticipants] as number, source: "sync",
    contentHash: t(W.hash), raw: t(W.raw), firstSeenMs, updatedMs: version, participants, arrival,
  };
  const w = new Writer(64);
  rowBinaryEncoder(CALLS).write(w, callRow(fact));
  return w.take();
}

const records: Array<Record<string, unknown>> = [
  {
    sessionId: "v1.us.12345.abc", type: "video", mode: "meet", status: "ended", initiator: "ünï-😀", receiver: "grp-1", receiverType: "group",
    initiatedAt: 1_700_000_000, startedAt: 1_700_000_005, endedAt: 1_700_003_605, hasRecording: true, totalAudioMinutes: 12.345,
    totalVideoMinutes: "0.001", totalDurationInMinutes: 60, totalDuration: "01:00:00", totalParticipants: 3, extra: { nested: ["x", 1] },
    participants: [
      { uid: "alice", state: "ended", isJoined: true, totalAudioMinutes: 1.5, totalVideoMinutes: 0, totalDuration: 1.5, deviceId: "d-1", joinedAt: 1_700_000_006, leftAt: 1_700_000_096, mid: "m-1" },
      { uid: "böb\u0000\n\"", state: "unanswered", isJoined: false, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0, platform: "ios" },
      { uid: "x".repeat(300), state: "ended", isJoined: "true", totalAudioMinutes: "123456.789", totalVideoMinutes: 2, totalDuration: 3, deviceId: "é".repeat(70) },
    ],
  },
  { sessionId: "ongoing-no-parts", type: "audio", mode: "call", status: "ongoing", initiator: "a", receiver: "b", receiverType: "user", startedAt: 1_700_000_000, participants: [] },
  { sessionId: "initiated-only", status: "initiated", initiatedAt: 1_600_000_000, note: "x".repeat(70_000) },
  { sessionId: "s".repeat(127), type: "a".repeat(128), status: "ended", startedAt: 1_700_000_000, endedAt: 1_700_000_001, totalAudioMinutes: 0.5 }, // negative minutes are refused by parseCallRecord (issue 30)
];

function parsed(raw: Record<string, unknown>) {
  const p = parseCallRecord(raw);
  if (!p.ok) throw new Error(p.reason);
  const parts = Array.isArray(raw.participants) ? (raw.participants as unknown[]) : [];
  return { call: p.call, participantExtras: parts.map(extraParticipantJson) };
}

/** A page body as the platform sends it, and each record's byte range in it. */
function pageOf(texts: Buffer[]): { page: Buffer; ranges: number[] } {
  const parts: Buffer[] = [Buffer.from('{"data":[')];
  const ranges: number[] = [];
  let at = parts[0].length;
  texts.forEach((t, i) => {
    if (i > 0) {
      parts.push(Buffer.from(","));
      at++;
    }
    ranges.push(at, at + t.length);
    parts.push(t);
    at += t.length;
  });
  parts.push(Buffer.from("]}"));
  return { page: Buffer.concat(parts), ranges };
}

function callsInPage(texts: Buffer[]): { calls: PendingCall[]; page: Buffer } {
  const { page, ranges } = pageOf(texts);
  const calls = texts.map((t, i) => {
    const p = parsed(JSON.parse(t.toString("utf8")) as Record<string, unknown>);
    return { ...p, rawJson: null, rawStart: ranges[2 * i], rawEnd: ranges[2 * i + 1], hash: contentHash(t) };
  });
  return { calls, page };
}

/** The direct bytes of staged calls against the reference: the same calls as WriteRows, decoded to text. */
function compare({ calls, page }: { calls: PendingCall[]; page?: Buffer }): number {
  const w = new Writer(16); // small: the writer must grow
  const pageIsUtf8 = page !== undefined && isUtf8(page);
  // Arrivals as the sink's clock makes them (about 2^50) and as the copy's SQLite pks are.
  const arrival = (i: number) => (i % 2 === 0 ? 1_795_000_000_000_000 + i : 1 + i);
  calls.forEach((p, i) => writeCallRow(w, 42, p, page, pageIsUtf8, 1_795_000_000_000 + i, 1_700_000_000_123, arrival(i)));
  const rows = calls.map(toWriteRow);
  resolveRawTexts(rows, page);
  const expected = Buffer.concat(rows.map((r, i) => reference(42, r, 1_795_000_000_000 + i, 1_700_000_000_123, arrival(i))));
  const got = w.take();
  expect(got.equals(expected)).toBe(true);
  return got.length;
}

describe("writeCallRow: the sync's calls straight to RowBinary", () => {
  const texts = records.map((r) => Buffer.from(JSON.stringify(r)));

  it("writes the same bytes as the schema's encoder for raw records left in a valid UTF-8 page", () => {
    expect(compare(callsInPage(texts))).toBeGreaterThan(70_000);
  });

  it("writes the same bytes for a page with invalid UTF-8 (the raw record stored with U+FFFD, as decoding stores it)", () => {
    const bad = Buffer.from(JSON.stringify({ sessionId: "bad-utf8", status: "ended", startedAt: 1_700_000_000, note: "AB" }));
    bad[bad.indexOf("AB")] = 0xff; // an invalid byte inside a string
    compare(callsInPage([texts[0], bad, texts[1]]));
  });

  it("writes the same bytes for raw records given as text (a page that could not be sliced)", () => {
    compare({
      calls: records.map((r) => {
        const rawJson = JSON.stringify(r);
        return { ...parsed(r), rawJson, hash: contentHash(rawJson) };
      }),
    });
  });

  it("writes strings of every length and script as Buffer encodes them", () => {
    const samples = ["", "a", "é", "😀", "\u0000", "\u007f", "\u0080", "\ud800", "x\udfff"];
    for (const len of [1, 2, 63, 126, 127, 128, 129, 200, 20_000]) {
      samples.push("a".repeat(len), "a".repeat(len - 1) + "é", "é" + "a".repeat(len - 1), "a".repeat(Math.floor(len / 2)) + "😀");
    }
    for (const s of samples) {
      const w = new Writer(1);
      w.string(s);
      const bytes = Buffer.from(s, "utf8");
      const expected = new Writer(1);
      expected.bytes(bytes); // its length, then the bytes
      expect(w.take().equals(expected.take()), JSON.stringify(s.slice(0, 20))).toBe(true);
    }
  });

  it("writes 64-bit integers as two's complement, little-endian", () => {
    for (const v of [0, 1, -1, 255, 256, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32 - 1, 2 ** 32, -(2 ** 32), 1_795_000_000_123, -1_700_000_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      const w = new Writer(1);
      w.i64(v);
      const expected = Buffer.alloc(8);
      expected.writeBigInt64LE(BigInt(v));
      expect(w.take().equals(expected), String(v)).toBe(true);
    }
  });
});
