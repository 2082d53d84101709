import { isUtf8 } from "node:buffer";
import { hash } from "node:crypto";
import type { ParsedCall } from "@/lib/platform/call-record";

/**
 * A parsed call as the sync's write side takes it: the pending call, its flat write row
 * (what crosses to the write worker), the content hash that tells a changed record, and
 * the raw text staged in its page. The writer (writer.ts) binds these rows to SQLite's
 * statements; the ClickHouse sink (clickhouse-call-row.ts) to ClickHouse's rows.
 */

const b = (v: boolean) => (v ? 1 : 0);

export interface Existing {
  hash: string | null;
  source: string;
  status: string | null;
}

export interface PendingCall {
  call: ParsedCall;
  /**
   * The record's raw text, or null when it stays in the page's own bytes at
   * [rawStart, rawEnd) until the write side decodes it (`resolveRawTexts`).
   */
  rawJson: string | null;
  rawStart?: number;
  rawEnd?: number;
  hash: string;
  /** Per participant, its unknown keys as JSON (null when it has none). */
  participantExtras: Array<string | null>;
}

/**
 * One call as the writer binds it: a flat array of primitives (see `toWriteRow`).
 * Flat because batches cross to the write worker by `postMessage`, and V8's structured
 * clone of a flat array costs about half what the same data costs as objects (no key
 * strings per object): 7 + 11 µs per call instead of 11 + 20.
 */
export type WriteRow = unknown[];

/** Positions in a WriteRow. */
export const W = {
  sessionId: 0, mid: 1, type: 2, mode: 3, status: 4, initiator: 5, receiver: 6, receiverType: 7,
  initiatedAt: 8, startedAt: 9, endedAt: 10, startAt: 11, hasRecording: 12, audio: 13, video: 14,
  durationMinutes: 15, durationSeconds: 16, totalParticipants: 17, hash: 18,
  /**
   * The raw record: its text, or (staged with the page's bytes) its start offset in the
   * page, with its end at rawEnd; `resolveRawTexts` turns offsets into text on the
   * write side, so the sync thread never decodes nor copies a record's text.
   */
  raw: 19, rawEnd: 20, participantCount: 21,
  /** Where participant values start: PART_WIDTH each, in call_participants column order from seq. */
  parts: 22,
} as const;
export const PART_WIDTH = 12; // seq uid state is_joined audio video duration device_id joined_at left_at mid raw

export function toWriteRow(p: PendingCall): WriteRow {
  const c = p.call;
  const row: unknown[] = [
    c.sessionId, c.mid, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiverType,
    c.initiatedAt, c.startedAt, c.endedAt, c.startAt, b(c.hasRecording), c.totalAudioMinutes, c.totalVideoMinutes,
    c.totalDurationMinutes, c.durationSeconds, c.totalParticipants, p.hash,
    p.rawJson ?? p.rawStart, p.rawJson === null ? p.rawEnd : null, c.participants.length,
  ];
  // Pushed, not preallocated: `new Array(n)` is holey, and postMessage writes a holey
  // array key by key instead of densely.
  for (const part of c.participants) {
    row.push(
      part.seq, part.uid, part.state, b(part.isJoined), part.totalAudioMinutes, part.totalVideoMinutes,
      part.totalDurationMinutes, part.deviceId, part.joinedAt, part.leftAt, part.mid, p.participantExtras[part.seq] ?? null,
    );
  }
  return row;
}

/** Participant keys the typed columns hold; anything else goes to the participant's `raw`. */
function isKnownParticipantKey(k: string): boolean {
  // A switch on property names (internalized strings) is several times cheaper than a
  // Set lookup, and this runs for every key of every participant of a backfill.
  switch (k) {
    case "uid": case "state": case "isJoined": case "totalAudioMinutes": case "totalVideoMinutes":
    case "totalDuration": case "deviceId": case "joinedAt": case "leftAt": case "mid":
      return true;
    default:
      return false;
  }
}

/**
 * The hash unchanged calls are told by: of the record's UTF-8 text. Given the page's
 * bytes it hashes the record's own bytes, which is the same digest for any valid UTF-8
 * without decoding them (a record with invalid UTF-8, whose text holds U+FFFD instead,
 * hashes differently and is rewritten once by the first sync that hashes its bytes).
 */
export function contentHash(rawJson: string | Uint8Array): string {
  return hash("sha1", rawJson, "base64url");
}

/**
 * Decodes the raw records staged as offsets into their page (`W.raw`, `W.rawEnd`) into
 * text, in place: on the write worker (the page's bytes are transferred to it, not
 * copied), or before an inline or ClickHouse sink takes the rows.
 */
export function resolveRawTexts(rows: WriteRow[], page: Buffer | undefined): void {
  for (const r of rows) {
    const start = r[W.raw];
    if (typeof start !== "number") continue;
    if (!page) throw new Error("a raw record staged as page offsets without its page");
    r[W.raw] = page.toString("utf8", start, r[W.rawEnd] as number);
    r[W.rawEnd] = null;
  }
}

/**
 * The write worker's counterpart of `resolveRawTexts`: each raw record staged as page
 * offsets becomes a view of the page's bytes, which the call statements bind as a blob
 * and store as text (`CAST(? AS TEXT)`: the same bytes, stored as TEXT). Decoding 1 KB of
 * UTF-8 into a string only for better-sqlite3 to measure and encode it back cost about
 * 3 µs a call of the worker. The bytes are the text only when they are valid UTF-8: a
 * page that is not (rare: a record with invalid UTF-8) is decoded as before, so that
 * record is stored with U+FFFD exactly as the decoding paths store it.
 */
export function resolveRawBytes(rows: WriteRow[], page: Buffer): void {
  if (!isUtf8(page)) return resolveRawTexts(rows, page);
  for (const r of rows) {
    const start = r[W.raw];
    if (typeof start !== "number") continue;
    r[W.raw] = page.subarray(start, r[W.rawEnd] as number);
    r[W.rawEnd] = null;
  }
}

/** Statuses after which the platform no longer changes a call on its own. */
export function isFinalStatus(status: string | null): boolean {
  return status !== "ongoing" && status !== "initiated";
}

export function extraParticipantJson(raw: unknown): string | null {
  if (!raw || typeof raw !== "object") return null;
  let extra: Record<string, unknown> | null = null;
  // for-in walks the object's own keys here (a parsed JSON object inherits none) without
  // allocating a key array.
  for (const k in raw) {
    if (isKnownParticipantKey(k)) continue;
    extra ??= {};
    extra[k] = (raw as Record<string, unknown>)[k];
  }
  return extra ? JSON.stringify(extra) : null;
}
