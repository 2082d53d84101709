import type { ClickHouse } from "@/lib/clickhouse";
import { CALL_RAW_COLUMNS } from "@/lib/analytics/csv-columns";
import { dataColumns, labelCell, rawCell, rawKind, RAW_KIND } from "@/lib/export/csv";
import { utf8Bytes, type CsvBytes } from "@/lib/export/csv-bytes";
import { ROW_CHARS, RowBinaryCsv, rowBinaryCsv } from "./row-binary-csv";

/**
 * The calls CSV from ClickHouse's RowBinary (row-binary-csv.ts): its cells are
 * `rawCell`'s and its derived cells `rawDerived`'s, byte for byte (CALL_RAW_COLUMNS).
 */

/** The SELECT's fields, in the CSV's data column order (CALL_RAW_COLUMNS), each cast to the type `CallsCsvDecoder` reads. */
export function callsCsvFields(closed: { type: string; mode: string; status: string; receiverType: string }, start: string, hasRecording: string): string {
  return [
    "CAST(app_pk AS UInt32) AS appPk",
    "CAST(session_id AS String) AS sessionId",
    `CAST(${closed.type} AS Nullable(String)) AS callType`,
    `CAST(${closed.mode} AS Nullable(String)) AS callMode`,
    `CAST(${closed.status} AS Nullable(String)) AS callStatus`,
    "CAST(initiator AS Nullable(String)) AS initiatorText",
    "CAST(receiver AS Nullable(String)) AS receiverText",
    `CAST(${closed.receiverType} AS Nullable(String)) AS receiverType`,
    "CAST(initiated_at AS Nullable(Int64)) AS initiatedAt",
    "CAST(started_at AS Nullable(Int64)) AS startedAt",
    "CAST(ended_at AS Nullable(Int64)) AS endedAt",
    `CAST(${start} AS Int64) AS startAt`,
    `CAST(${hasRecording} AS UInt8) AS hasRecording`,
    "CAST(total_audio_minutes_x1000 AS Int64) AS audioX1000",
    "CAST(total_video_minutes_x1000 AS Int64) AS videoX1000",
    "CAST(total_duration_minutes_x1000 AS Int64) AS durationX1000",
    "CAST(duration_seconds AS Int64) AS durationSeconds",
    "CAST(total_participants AS UInt32) AS totalParticipants",
  ].join(", ");
}

/** Field kinds of the CSV's data columns (rawCell's formatting of each). */
const K = dataColumns(CALL_RAW_COLUMNS).map(rawKind);
// The row writer below writes each column as its kind says; a change of kinds must change it too.
if (K.join() !== [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, RAW_KIND.boolean, RAW_KIND.decimal, RAW_KIND.decimal, RAW_KIND.decimal, 0, 0].join()) {
  throw new Error("calls-csv.ts: CALL_RAW_COLUMNS' kinds changed; update CallsCsvDecoder.row");
}

/** A closed set's value as written: its cell, and its label cell (both bytes). */
interface ClosedCells {
  /** The value's bytes in RowBinary (what a row is matched by). */
  bytes: Uint8Array;
  cell: Uint8Array;
  label: Uint8Array;
}

const NULL_CLOSED: ClosedCells = { bytes: new Uint8Array(0), cell: new Uint8Array(0), label: utf8Bytes(labelCell(null)) };

/** Closed values matched byte by byte (the documented sets have 11); any further ones by their text. */
const KNOWN_MAX = 16;

const TRUE = utf8Bytes(rawCell(1, K[12]));
const FALSE = utf8Bytes(rawCell(0, K[12]));

/** The calls CSV's lines from the RowBinary of `callsCsvFields`. */
export class CallsCsvDecoder extends RowBinaryCsv {
  private readonly known: ClosedCells[] = [];
  private readonly others = new Map<string, ClosedCells>();

  protected row(w: CsvBytes): void {
    this.app(w);
    w.comma();
    this.text(w, false);
    w.comma();
    const type = this.closed(w);
    w.comma();
    const mode = this.closed(w);
    w.comma();
    const status = this.closed(w);
    w.comma();
    this.text(w, true);
    w.comma();
    this.text(w, true);
    w.comma();
    const receiverType = this.closed(w);
    w.comma();
    // Cells as w.cell(v, K[i]) writes them, its dispatch on the kinds unrolled (the kinds are the columns').
    const initiatedAt = this.nullableI64();
    if (initiatedAt !== null) w.number(initiatedAt);
    w.comma();
    const startedAt = this.nullableI64();
    if (startedAt !== null) w.number(startedAt);
    w.comma();
    const endedAt = this.nullableI64();
    if (endedAt !== null) w.number(endedAt);
    w.comma();
    const startAt = this.i64();
    w.number(startAt);
    w.comma();
    w.piece(this.u8() !== 0 ? TRUE : FALSE);
    w.comma();
    // Minutes as the JSON rows hold them (minutes(): thousandths / 1000), to 3 places.
    w.decimal(this.i64() / 1000);
    w.comma();
    w.decimal(this.i64() / 1000);
    w.comma();
    w.decimal(this.i64() / 1000);
    w.comma();
    w.number(this.i64());
    w.comma();
    w.number(this.u32());
    // The derived cells: the four labels, then the ISO times of initiatedAt, startedAt, endedAt, startAt.
    w.reserve(ROW_CHARS + type.label.length + mode.label.length + status.label.length + receiverType.label.length);
    w.comma();
    w.piece(type.label);
    w.comma();
    w.piece(mode.label);
    w.comma();
    w.piece(status.label);
    w.comma();
    w.piece(receiverType.label);
    w.comma();
    if (initiatedAt !== null) w.iso(initiatedAt, this.iso);
    w.comma();
    if (startedAt !== null) w.iso(startedAt, this.iso);
    w.comma();
    if (endedAt !== null) w.iso(endedAt, this.iso);
    w.comma();
    w.iso(startAt, this.iso);
    w.crlf();
  }

  /** A closed set's Nullable(String), its cell written: a handful of values, their cells (and labels) made once each. */
  private closed(w: CsvBytes): ClosedCells {
    if (this.u8() === 1) return NULL_CLOSED;
    this.string();
    const b = this.buf;
    const start = this.strStart;
    const n = this.strEnd - start;
    // The documented values (a dozen): found by their bytes, no string made.
    let cells: ClosedCells | undefined;
    for (let k = 0; k < this.known.length && cells === undefined; k++) {
      const c = this.known[k];
      if (c.bytes.length !== n) continue;
      let i = 0;
      while (i < n && c.bytes[i] === b[start + i]) i++;
      if (i === n) cells = c;
    }
    if (cells === undefined) {
      const value = this.utf8(start, this.strEnd);
      cells = this.others.get(value);
      if (cells === undefined) {
        cells = { bytes: this.buf.slice(start, this.strEnd), cell: utf8Bytes(rawCell(value, K[2])), label: utf8Bytes(labelCell(value)) };
        if (this.known.length < KNOWN_MAX) this.known.push(cells);
        // Values outside the documented sets ("other" with its text) may be many: keep the map bounded.
        else if (this.others.size < 4096) this.others.set(value, cells);
      }
    }
    w.reserve(ROW_CHARS + cells.cell.length);
    w.piece(cells.cell);
    return cells;
  }
}

/** The calls CSV's lines of `query` (a SELECT of `callsCsvFields`) in the download's zone `tz`. */
export function callsCsvBytes(
  ch: ClickHouse,
  query: string,
  apps: { pks: readonly number[]; appId: (pk: number) => string },
  tz: string | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  return rowBinaryCsv(ch, query, new CallsCsvDecoder(apps.appId, new Set(apps.pks), tz), signal);
}
