import { ClickHouseError, type ClickHouse } from "@/lib/clickhouse";
import { CALL_RAW_COLUMNS } from "@/lib/analytics/csv-columns";
import { dataColumns, labelCell, rawCell, rawKind } from "@/lib/export/csv";
import { CsvBytes, utf8Bytes } from "@/lib/export/csv-bytes";
import { isoBytes, type IsoBytes } from "@/lib/export/iso";

/**
 * The calls CSV from ClickHouse's RowBinary (docs/decisions/0034, "The calls CSV from
 * RowBinary"): the query's bytes are read field by field and written straight into the
 * CSV's UTF-8 bytes (lib/export/csv-bytes.ts), with no JSON text, no row object and, for
 * the plain ASCII that ids and names mostly are, no string at all. The cells are
 * `rawCell`'s and the derived cells `rawDerived`'s, byte for byte (the parity suite
 * compares the whole file with the in-memory engine's). JSONEachRow + JSON.parse + an
 * array a row cost ~10 µs a row (10k rows/s); this loop is well under 1 µs.
 *
 * RowBinary (ClickHouse docs, "RowBinary"; the same from 18.16 to 26.x): values in column
 * order, little-endian integers, String = LEB128 byte length + bytes, Nullable = one byte
 * (1: NULL) then the value. The SELECT casts every field to the type read here
 * (`CALLS_CSV_FIELDS`), so the layout is the query's, whatever the table's types.
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

const TWO_32 = 4_294_967_296;

/** Room (CsvBytes.reserve's units: 6 bytes each, beyond its 512) for the fixed-size cells after a piece of unknown length: numbers, four ISO times. */
const ROW_CHARS = 256;

/** Thrown by a read past the bytes received: the row is read again once the next chunk is joined on. */
const NEED_MORE = Symbol("need more bytes");

/** Bytes a batch is sent at (and the first rows at once: the download starts without waiting for a full batch). */
const BATCH_BYTES = 256 * 1024;

/** A closed set's value as written: its cell, and its label cell (both bytes). */
interface ClosedCells {
  cell: Uint8Array;
  label: Uint8Array;
}

const NULL_CLOSED: ClosedCells = { cell: new Uint8Array(0), label: utf8Bytes(labelCell(null)) };

/**
 * Decodes the RowBinary of `callsCsvFields` into CSV lines: `push` each chunk as it
 * arrives, `take` the lines written so far. A row cut between two chunks is read again
 * whole once the next one is there. `appPks`: the apps the query asked for — a row of any
 * other app is not a row: on 18.16 a query that fails after its first blocks ends its
 * 200 answer with the error's text ("Code: 241, e.displayText() = …"), and the first
 * bytes of that text read as an app pk that was not asked for (the answer's end then
 * holds no row either).
 */
export class CallsCsvDecoder {
  private readonly iso: IsoBytes;
  private readonly appCells = new Map<number, Uint8Array>();
  private readonly closedCells = new Map<string, ClosedCells>();
  /** Bytes of a row cut at the end of the last chunk. */
  private tail: Uint8Array | undefined;
  private out: CsvBytes;
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private rowsWritten = 0;

  constructor(
    private readonly appIds: (pk: number) => string,
    private readonly appPks: ReadonlySet<number>,
    tz = "UTC",
  ) {
    this.iso = isoBytes(tz);
    this.out = new CsvBytes(BATCH_BYTES);
  }

  /** Lines written since the last `take`, in bytes. */
  get pending(): number {
    return this.out.pos;
  }

  /** Rows written so far. */
  get rows(): number {
    return this.rowsWritten;
  }

  /** The lines written since the last call (recyclable once sent: csv-bytes.ts). */
  take(): Uint8Array {
    const bytes = this.out.bytes();
    this.out = new CsvBytes(Math.max(BATCH_BYTES, bytes.length));
    return bytes;
  }

  /** Writes every whole row of `chunk` (with the cut row before it). */
  push(chunk: Uint8Array): void {
    let buf = chunk;
    if (this.tail) {
      buf = new Uint8Array(this.tail.length + chunk.length);
      buf.set(this.tail);
      buf.set(chunk, this.tail.length);
      this.tail = undefined;
    }
    this.buf = buf;
    this.pos = 0;
    const w = this.out;
    while (this.pos < buf.length) {
      const rowStart = this.pos;
      const outStart = w.pos;
      try {
        this.row(w);
      } catch (err) {
        if (err !== NEED_MORE) throw err;
        this.pos = rowStart;
        w.pos = outStart;
        this.tail = buf.slice(rowStart);
        return;
      }
      this.rowsWritten++;
    }
  }

  /** The answer ended: bytes left over are not a row (the end of an error's text). */
  end(): void {
    if (this.tail && this.tail.length > 0) throw this.answerError(this.tail, 0);
  }

  private row(w: CsvBytes): void {
    const appPk = this.u32();
    if (!this.appPks.has(appPk)) throw this.answerError(this.buf, this.pos - 4);
    // Room for the cells up to the next piece of unknown length (texts, closed values and labels reserve their own).
    const app = this.appCell(appPk);
    w.reserve(ROW_CHARS + app.length);
    w.piece(app);
    w.comma();
    this.text(w, false);
    w.comma();
    const type = this.closed(true);
    w.reserve(ROW_CHARS + type.cell.length);
    w.piece(type.cell);
    w.comma();
    const mode = this.closed(true);
    w.reserve(ROW_CHARS + mode.cell.length);
    w.piece(mode.cell);
    w.comma();
    const status = this.closed(true);
    w.reserve(ROW_CHARS + status.cell.length);
    w.piece(status.cell);
    w.comma();
    this.text(w, true);
    w.comma();
    this.text(w, true);
    w.comma();
    const receiverType = this.closed(true);
    w.reserve(ROW_CHARS + receiverType.cell.length);
    w.piece(receiverType.cell);
    w.comma();
    const initiatedAt = this.nullableI64();
    if (initiatedAt !== null) w.cell(initiatedAt, K[8]);
    w.comma();
    const startedAt = this.nullableI64();
    if (startedAt !== null) w.cell(startedAt, K[9]);
    w.comma();
    const endedAt = this.nullableI64();
    if (endedAt !== null) w.cell(endedAt, K[10]);
    w.comma();
    const startAt = this.i64();
    w.cell(startAt, K[11]);
    w.comma();
    w.cell(this.u8(), K[12]);
    w.comma();
    // Minutes as the JSON rows hold them (minutes(): thousandths / 1000), to 3 places.
    w.cell(this.i64() / 1000, K[13]);
    w.comma();
    w.cell(this.i64() / 1000, K[14]);
    w.comma();
    w.cell(this.i64() / 1000, K[15]);
    w.comma();
    w.cell(this.i64(), K[16]);
    w.comma();
    w.cell(this.u32(), K[17]);
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

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw NEED_MORE;
  }

  private u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  private u32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
  }

  private i64(): number {
    this.need(8);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 8;
    const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
    const hi = b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24); // signed
    return hi * TWO_32 + lo;
  }

  private nullableI64(): number | null {
    return this.u8() === 1 ? null : this.i64();
  }

  /** A String's byte length (LEB128) and first byte's position; the position moves past it. */
  private stringSpan(): [start: number, end: number] {
    const b = this.buf;
    let n = 0;
    let shift = 1;
    for (;;) {
      this.need(1);
      const byte = b[this.pos++];
      n += (byte & 0x7f) * shift;
      if (byte < 0x80) break;
      shift *= 128;
    }
    this.need(n);
    const start = this.pos;
    this.pos += n;
    return [start, start + n];
  }

  /**
   * A String (or Nullable) field as `rawCell` writes it: plain ASCII that needs neither
   * quotes nor a formula guard (csv-bytes.ts `text`'s fast path) is copied as it is; any
   * other is decoded and written by `text`.
   */
  private text(w: CsvBytes, nullable: boolean): void {
    if (nullable && this.u8() === 1) return;
    const [start, end] = this.stringSpan();
    if (end === start) return;
    const b = this.buf;
    const c0 = b[start];
    let plain = !(c0 === 61 || c0 === 43 || c0 === 45 || c0 === 64 || c0 === 9 || c0 === 13);
    for (let i = start; plain && i < end; i++) {
      const c = b[i];
      if (c >= 128 || c === 34 || c === 44 || c === 13 || c === 10) plain = false;
    }
    if (plain) {
      w.reserve(end - start);
      const out = w.buf;
      let p = w.pos;
      for (let i = start; i < end; i++) out[p++] = b[i];
      w.pos = p;
    } else w.text(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString("utf8"));
  }

  /** A closed set's Nullable(String): a handful of values, their cells written once each. */
  private closed(nullable: boolean): ClosedCells {
    if (nullable && this.u8() === 1) return NULL_CLOSED;
    const [start, end] = this.stringSpan();
    const b = this.buf;
    // Codes are short ASCII: a key without decoding (latin1 keeps any other byte distinct too).
    let key = "";
    for (let i = start; i < end; i++) key += String.fromCharCode(b[i]);
    let cells = this.closedCells.get(key);
    if (cells === undefined) {
      const value = Buffer.from(b.buffer, b.byteOffset + start, end - start).toString("utf8");
      cells = { cell: utf8Bytes(rawCell(value, K[2])), label: utf8Bytes(labelCell(value)) };
      // Unknown values ("other" with its text) are many at most: keep the map bounded.
      if (this.closedCells.size < 4096) this.closedCells.set(key, cells);
    }
    return cells;
  }

  private appCell(appPk: number): Uint8Array {
    let cell = this.appCells.get(appPk);
    if (cell === undefined) this.appCells.set(appPk, (cell = utf8Bytes(rawCell(this.appIds(appPk), K[0]))));
    return cell;
  }

  /** The error ClickHouse wrote into its answer after the rows it had sent (its text from `at`). */
  private answerError(bytes: Uint8Array, at: number): ClickHouseError {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(bytes.length - at, 4096)).toString("utf8");
    const code = /\bCode: (\d+)/.exec(text)?.[1];
    return new ClickHouseError(code ? `ClickHouse query failed: ${text.trim().slice(0, 500)}` : "ClickHouse query failed: its answer ended in bytes that are not a row", code);
  }
}

/**
 * The CSV's lines of `query` (a SELECT of `callsCsvFields`), in batches of about
 * BATCH_BYTES, the first as soon as there is a row: read from ClickHouse only as fast as
 * the batches are taken (the HTTP answer's backpressure reaches ClickHouse's socket), so
 * memory holds a batch or two whatever the size. Leaving early stops the query
 * (ClickHouse.streamRowBinary).
 */
export async function* callsCsvBytes(
  ch: ClickHouse,
  query: string,
  apps: { pks: readonly number[]; appId: (pk: number) => string },
  tz: string | undefined,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const decoder = new CallsCsvDecoder(apps.appId, new Set(apps.pks), tz);
  let sent = false;
  for await (const chunk of ch.streamRowBinary(query, signal)) {
    decoder.push(chunk);
    if (decoder.pending >= BATCH_BYTES || (!sent && decoder.pending > 0)) {
      sent = true;
      yield decoder.take();
    }
  }
  decoder.end();
  if (decoder.pending > 0) yield decoder.take();
}
