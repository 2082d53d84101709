import { thousandths } from "@/lib/clickhouse/rows";
import type { Writer } from "@/lib/clickhouse/row-binary";
import { CALLS } from "@/lib/clickhouse/schema";
import { PART_WIDTH, W, type WriteRow } from "./writer";

/**
 * The sync's calls, from the rows it stages (WriteRow) straight into ClickHouse's
 * RowBinary: the same bytes as building the call's object (rows.ts `callRow`) and
 * encoding it with the encoder compiled from the schema (row-binary.ts), without the
 * objects and arrays made per call on the way, and with the raw record copied from the
 * page's bytes instead of being decoded into a string and encoded again. That path cost
 * about a third of the sync thread at 30,000 calls/s (session 8, decision 0015 §8).
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
  "p_raw Array(Nullable(String))",
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

/** The raw record: text, or (resolveRawBytes) its UTF-8 bytes in the page. */
function nullableText(w: Writer, v: unknown): void {
  if (v === null || v === undefined) return w.u8(1);
  w.u8(0);
  if (v instanceof Uint8Array) w.bytes(v);
  else w.string(String(v));
}

/**
 * Appends one version of a call: `r` as RunState staged it (its raw record as text or as
 * bytes: resolveRawBytes), written by the sync (`source = 'sync'`).
 */
export function writeCallRow(w: Writer, appPk: number, r: WriteRow, version: number, firstSeenMs: number): void {
  w.u32(appPk);
  w.string(String(r[W.sessionId]));
  w.i64(version);
  w.u8(0);
  nullableString(w, r[W.mid]);
  nullableString(w, r[W.type]);
  nullableString(w, r[W.mode]);
  nullableString(w, r[W.status]);
  nullableString(w, r[W.initiator]);
  nullableString(w, r[W.receiver]);
  nullableString(w, r[W.receiverType]);
  nullableInt(w, r[W.initiatedAt]);
  nullableInt(w, r[W.startedAt]);
  nullableInt(w, r[W.endedAt]);
  w.i64(int(r[W.startAt]));
  w.u8(r[W.hasRecording] === 1 ? 1 : 0);
  w.i64(thousandths(r[W.audio] as number));
  w.i64(thousandths(r[W.video] as number));
  w.i64(thousandths(r[W.durationMinutes] as number));
  w.i64(int(r[W.durationSeconds]));
  w.u32(int(r[W.totalParticipants]));
  w.string("sync");
  nullableString(w, r[W.hash]);
  nullableText(w, r[W.raw]);
  w.i64(firstSeenMs);
  w.i64(version);
  // The participants as parallel arrays: one loop per column over the call's participants
  // (written out: a helper taking the column's writer as a closure cost a call per value).
  const n = r[W.participantCount] as number;
  const end = W.parts + n * PART_WIDTH;
  w.varint(n);
  for (let o = W.parts; o < end; o += PART_WIDTH) w.u32(Number(r[o]));
  w.varint(n);
  for (let o = W.parts + 1; o < end; o += PART_WIDTH) w.string(String(r[o]));
  w.varint(n);
  for (let o = W.parts + 2; o < end; o += PART_WIDTH) nullableString(w, r[o]);
  w.varint(n);
  for (let o = W.parts + 3; o < end; o += PART_WIDTH) w.u8(r[o] === 1 ? 1 : 0);
  for (let field = 4; field <= 6; field++) {
    w.varint(n);
    for (let o = W.parts + field; o < end; o += PART_WIDTH) w.i64(thousandths(r[o] as number));
  }
  w.varint(n);
  for (let o = W.parts + 7; o < end; o += PART_WIDTH) nullableString(w, r[o]);
  for (let field = 8; field <= 9; field++) {
    w.varint(n);
    for (let o = W.parts + field; o < end; o += PART_WIDTH) nullableInt(w, r[o]);
  }
  for (let field = 10; field <= 11; field++) {
    w.varint(n);
    for (let o = W.parts + field; o < end; o += PART_WIDTH) nullableString(w, r[o]);
  }
}

/** A non-nullable integer column: a missing value is 0, as the schema's encoder writes it. */
const int = (v: unknown) => (v === undefined ? 0 : Number(v));
