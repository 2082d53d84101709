import { ClickHouseError, type ClickHouse } from "@/lib/clickhouse";
import { rawCell, RAW_KIND } from "@/lib/export/csv";
import { CsvBytes, utf8Bytes } from "@/lib/export/csv-bytes";
import { isoBytes, type IsoBytes } from "@/lib/export/iso";

/**
 * The long CSVs of the ClickHouse engine (the calls, the participants) from ClickHouse's
 * RowBinary (docs/decisions/0034, "CSVs from RowBinary"): the query's bytes are read
 * field by field and written straight into the CSV's UTF-8 bytes (lib/export/csv-bytes.ts),
 * with no JSON text, no row object and, for the plain ASCII that ids and uids mostly are,
 * no string at all. JSONEachRow + JSON.parse + a row object or array cost ~10 µs a row
 * (10k rows/s at 1M calls); this is well under 1 µs. Each report's decoder (calls-csv.ts,
 * participants-csv.ts) writes its cells exactly as the writer of its kind would
 * (`rawCell`, `csvCell` + csv-stringify), so the file is byte for byte the in-memory
 * engine's (the parity suite compares them).
 *
 * RowBinary (ClickHouse docs, "RowBinary"; the same from 18.16 to 26.x): values in column
 * order, little-endian integers, String = LEB128 byte length + bytes, Nullable = one byte
 * (1: NULL) then the value. Each SELECT casts every field to the type its decoder reads,
 * so the layout is the query's, whatever the tables' types.
 */

const TWO_32 = 4_294_967_296;

/** Thrown by a read past the bytes received: the row is read again once the next chunk is joined on. */
const NEED_MORE = Symbol("need more bytes");

/** Bytes a batch is sent at (the first rows go at once: the download starts without waiting for a full batch). */
const BATCH_BYTES = 256 * 1024;

/** Room (CsvBytes.reserve's units: 6 bytes each, beyond its 512) for the fixed-size cells after a piece of unknown length: numbers, ISO times. */
export const ROW_CHARS = 256;

/**
 * Reads RowBinary rows into CSV lines: `push` each chunk as it arrives, `take` the lines
 * written so far. A row cut between two chunks is read again whole once the next one is
 * there. `appPks`: the apps the query asked for (every row's first field is its app's pk)
 * — a row of any other app is not a row: on 18.16 a query that fails after its first
 * blocks ends its 200 answer with the error's text ("Code: 241, e.displayText() = …"),
 * and the first bytes of that text read as an app pk that was not asked for.
 */
export abstract class RowBinaryCsv {
  protected readonly iso: IsoBytes;
  private readonly appCells = new Map<number, Uint8Array>();
  /** Bytes of a row cut at the end of the last chunk. */
  private tail: Uint8Array | undefined;
  private out: CsvBytes;
  protected buf: Uint8Array = new Uint8Array(0);
  protected pos = 0;

  constructor(
    private readonly appIds: (pk: number) => string,
    private readonly appPks: ReadonlySet<number>,
    tz = "UTC",
  ) {
    this.iso = isoBytes(tz);
    this.out = new CsvBytes(BATCH_BYTES);
  }

  /** Writes one row's line (its CRLF included), reading its fields from `buf` at `pos`. */
  protected abstract row(w: CsvBytes): void;

  /** Lines written since the last `take`, in bytes. */
  get pending(): number {
    return this.out.pos;
  }

  /** The lines written since the last call. */
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
    }
  }

  /** The answer ended: bytes left over are not a row (the end of an error's text). */
  end(): void {
    if (this.tail && this.tail.length > 0) throw answerError(this.tail, 0);
  }

  /** The row's app (its first field), as its cell's bytes. */
  protected app(w: CsvBytes): void {
    const appPk = this.u32();
    if (!this.appPks.has(appPk)) throw answerError(this.buf, this.pos - 4);
    let cell = this.appCells.get(appPk);
    if (cell === undefined) this.appCells.set(appPk, (cell = utf8Bytes(rawCell(this.appIds(appPk), RAW_KIND.plain))));
    w.reserve(ROW_CHARS + cell.length);
    w.piece(cell);
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw NEED_MORE;
  }

  protected u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  protected u32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
  }

  protected i64(): number {
    this.need(8);
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 8;
    const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
    const hi = b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24); // signed
    return hi * TWO_32 + lo;
  }

  protected nullableI64(): number | null {
    return this.u8() === 1 ? null : this.i64();
  }

  /** The last String read by `string()`: its first byte and end in `buf` (fields, not a tuple: no allocation a value). */
  protected strStart = 0;
  protected strEnd = 0;

  /** Reads a String (sets `strStart`, `strEnd`); the position moves past it. */
  protected string(): void {
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
    this.strStart = this.pos;
    this.pos += n;
    this.strEnd = this.pos;
  }

  /** Bytes of `buf` as text. */
  protected utf8(start: number, end: number): string {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start).toString("utf8");
  }

  /**
   * A String (or Nullable: nothing for NULL) field as `rawCell` writes it: plain ASCII
   * that needs neither quotes nor a formula guard (csv-bytes.ts `text`'s fast path) is
   * copied as it is; any other is decoded and written by `text`.
   */
  protected text(w: CsvBytes, nullable: boolean): void {
    if (nullable && this.u8() === 1) return;
    this.string();
    const start = this.strStart;
    const end = this.strEnd;
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
    } else w.text(this.utf8(start, end));
  }
}

/** The error ClickHouse wrote into its answer after the rows it had sent (its text from `at`). */
function answerError(bytes: Uint8Array, at: number): ClickHouseError {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(bytes.length - at, 4096)).toString("utf8");
  const code = /\bCode: (\d+)/.exec(text)?.[1];
  return new ClickHouseError(code ? `ClickHouse query failed: ${text.trim().slice(0, 500)}` : "ClickHouse query failed: its answer ended in bytes that are not a row", code);
}

/**
 * The CSV lines of `query` (RowBinary, read by `decoder`), in batches of about
 * BATCH_BYTES, the first as soon as there is a row: read from ClickHouse only as fast as
 * the batches are taken (the HTTP answer's backpressure reaches ClickHouse's socket), so
 * memory holds a batch or two whatever the size. Leaving early stops the query
 * (ClickHouse.streamRowBinary).
 */
export async function* rowBinaryCsv(ch: ClickHouse, query: string, decoder: RowBinaryCsv, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
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
