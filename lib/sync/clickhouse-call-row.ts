import { thousandths } from "@/lib/clickhouse/rows";
import type { Writer } from "@/lib/clickhouse/row-binary";
import { CALLS } from "@/lib/clickhouse/schema";
import type { PendingCall } from "./pending-rows";

/**
 * The sync's calls, as it stages them (PendingCall: the parsed call, its hash, its raw
 * record), straight into ClickHouse's RowBinary: the same bytes as the flat WriteRow
 * built into the call's object (rows.ts `callRow`) and encoded by the encoder compiled
 * from the schema (row-binary.ts), without the arrays and objects made per call on the
 * way, and with the raw record copied from the page's bytes instead of decoded into a
 * string and encoded again. That path cost about a third of the sync thread's CPU
 * (session 8; decision 0015 §8).
 *
 * The column order is the schema's: `CALL_COLUMNS` below is checked against `CALLS` when
 * this module loads, so a column added to the schema without this encoder fails at once
 * (and the byte-for-byte test against the schema's encoder, clickhouse-call-row.test.ts).
 */

/** What each column of `calls` gets, in the table's order. */
const CALL_COLUMNS = [
  "app_pk UInt32", "session_id String", "version UInt64", "deleted UInt8",
  "mid Nullable(String)", "type Nullable(String)", "mode Nullable(String)", "status Nullable(String)",
  "initiator Nullable(String)", "receiver Nullable(String)", "receiver_type Nullable(String)",
  "initiated_at Nullable(Int64)", "started_at Nullable(Int64)", "ended_at Nullable(Int64)", "start_at Int64",
  "platform_has_recording UInt8", "total_audio_minutes_x1000 Int64", "total_video_minutes_x1000 Int64",
  "total_duration_minutes_x1000 Int64", "duration_seconds Int64", "total_participants UInt32", "source String",
  "content_hash Nullable(String)", "raw Nullable(String)", "first_seen_ms Int64", "updated_ms Int64",
  "p_seq Array(UInt32)", "p_uid Array(String)", "p_state Array(Nullable(String))", "p_is_joined Array(UInt8)",
  "p_total_audio_minutes_x1000 Array(Int64)", "p_total_video_minutes_x1000 Array(Int64)",
  "p_total_duration_minutes_x1000 Array(Int64)", "p_device_id Array(Nullable(String))",
  "p_joined_at Array(Nullable(Int64))", "p_left_at Array(Nullable(Int64))", "p_mid Array(Nullable(String))",
  "p_raw Array(Nullable(String))", "arrival UInt64",
] as const;

const schemaColumns = CALLS.columns.map(([name, type]) => `${name} ${type}`);
if (schemaColumns.join() !== CALL_COLUMNS.join()) {
  throw new Error(`clickhouse-call-row.ts writes ${CALL_COLUMNS.length} columns that no longer match the calls table's: update it with the schema`);
}

/** The INSERT's column list (the schema's order). */
export const CALL_ROW_COLUMNS: string[] = CALLS.columns.map(([name]) => name);

function nullableString(w: Writer, v: unknown): void {
  if (v === null || v === undefined) return w.u8(1);
  w.u8(0);
  w.string(String(v));
}

function nullableInt(w: Writer, v: unknown): void {
  if (v === null || v === undefined) return w.u8(1);
  w.u8(0);
  w.i64(Number(v));
}

/**
 * The raw record: its text, or its byte range in `page`. The bytes are the text's UTF-8
 * when the page is valid UTF-8 (`pageIsUtf8`); otherwise the range is decoded, with U+FFFD
 * for what is invalid, as the SQLite writers store it (writer.ts `resolveRawTexts`).
 */
function rawRecord(w: Writer, p: PendingCall, page: Buffer | undefined, pageIsUtf8: boolean): void {
  if (p.rawJson !== null) return nullableString(w, p.rawJson);
  if (!page || p.rawStart === undefined || p.rawEnd === undefined) throw new Error("a raw record staged as page offsets without its page");
  w.u8(0);
  if (pageIsUtf8) w.bytes(page.subarray(p.rawStart, p.rawEnd));
  else w.string(page.toString("utf8", p.rawStart, p.rawEnd));
}

/**
 * Appends one version of a call as the sync staged it (`source = 'sync'`); `page`: the
 * bytes its raw record may lie in (`pageIsUtf8`: `isUtf8(page)`, asked once a page);
 * `arrival`: the call's arrival ordinal (the sink's clock, or the one it was stored with).
 */
export function writeCallRow(
  w: Writer, appPk: number, p: PendingCall, page: Buffer | undefined, pageIsUtf8: boolean, version: number, firstSeenMs: number, arrival: number,
): void {
  const c = p.call;
  w.u32(appPk);
  w.string(String(c.sessionId));
  w.i64(version);
  w.u8(0);
  nullableString(w, c.mid);
  nullableString(w, c.type);
  nullableString(w, c.mode);
  nullableString(w, c.status);
  nullableString(w, c.initiator);
  nullableString(w, c.receiver);
  nullableString(w, c.receiverType);
  nullableInt(w, c.initiatedAt);
  nullableInt(w, c.startedAt);
  nullableInt(w, c.endedAt);
  w.i64(int(c.startAt));
  w.u8(c.hasRecording ? 1 : 0);
  w.i64(thousandths(c.totalAudioMinutes));
  w.i64(thousandths(c.totalVideoMinutes));
  w.i64(thousandths(c.totalDurationMinutes));
  w.i64(int(c.durationSeconds));
  w.u32(int(c.totalParticipants));
  w.string("sync");
  nullableString(w, p.hash);
  rawRecord(w, p, page, pageIsUtf8);
  w.i64(firstSeenMs);
  w.i64(version);
  // The participants as parallel arrays: one loop per column (written out: a helper
  // taking the column's writer as a closure cost a call per value).
  const parts = c.participants;
  const n = parts.length;
  w.varint(n);
  for (const x of parts) w.u32(Number(x.seq));
  w.varint(n);
  for (const x of parts) w.string(String(x.uid));
  w.varint(n);
  for (const x of parts) nullableString(w, x.state);
  w.varint(n);
  for (const x of parts) w.u8(x.isJoined ? 1 : 0);
  for (const field of MINUTE_FIELDS) {
    w.varint(n);
    for (const x of parts) w.i64(thousandths(x[field]));
  }
  w.varint(n);
  for (const x of parts) nullableString(w, x.deviceId);
  for (const field of TIME_FIELDS) {
    w.varint(n);
    for (const x of parts) nullableInt(w, x[field]);
  }
  w.varint(n);
  for (const x of parts) nullableString(w, x.mid);
  w.varint(n);
  for (const x of parts) nullableString(w, p.participantExtras[x.seq] ?? null);
  w.i64(arrival);
}

const MINUTE_FIELDS = ["totalAudioMinutes", "totalVideoMinutes", "totalDurationMinutes"] as const;
const TIME_FIELDS = ["joinedAt", "leftAt"] as const;

/** A non-nullable integer column: a missing value is 0, as the schema's encoder writes it. */
const int = (v: unknown) => (v === undefined ? 0 : Number(v));
