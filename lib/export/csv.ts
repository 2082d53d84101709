import { stringify } from "csv-stringify/sync";

/**
 * Streaming CSV of any analytics result: rows are pulled from an iterator (better-sqlite3
 * `.iterate()` for the calls list) only as fast as the client reads, so memory stays
 * constant whatever the size; the export stops when the client disconnects.
 * RFC 4180 quoting and UTF-8 by csv-stringify; decimals fixed to 3 places; cells that
 * a spreadsheet would run as a formula (leading =, +, -, @, tab, CR) are prefixed with `'`.
 */

export interface CsvColumn<T> {
  key: keyof T & string;
  header?: string;
  /** `decimal`: fixed to 3 places. */
  kind?: "decimal";
}

const FORMULA_START = /^[=+\-@\t\r]/;

export function neutralise(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

export function csvCell(value: unknown, kind?: "decimal"): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (kind === "decimal") return value.toFixed(3);
    return String(value);
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  return neutralise(String(value));
}

/** `callboard-<report>-<YYYY-MM-DD>.csv` (today, UTC). */
export function csvFilename(report: string, now = new Date()): string {
  return `callboard-${report}-${now.toISOString().slice(0, 10)}.csv`;
}

const CHUNK_ROWS = 512;

/** A web ReadableStream of CSV bytes pulled from `rows`; `signal` aborts it. */
export function csvStream<T>(rows: Iterable<T>, columns: ReadonlyArray<CsvColumn<T>>, signal?: AbortSignal): ReadableStream<Uint8Array> {
  const iterator = rows[Symbol.iterator]();
  const headers = columns.map((c) => c.header ?? c.key);
  const encoder = new TextEncoder();
  let first = true;
  let done = false;
  const stop = () => {
    if (done) return;
    done = true;
    iterator.return?.(); // releases the SQLite statement
  };
  signal?.addEventListener("abort", stop, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      // Called only when the consumer wants more: the client's reads drive the iteration.
      pull(controller) {
        if (done || signal?.aborted) {
          stop();
          controller.close();
          return;
        }
        const records: string[][] = [];
        while (records.length < CHUNK_ROWS) {
          const next = iterator.next();
          if (next.done) {
            done = true;
            break;
          }
          records.push(columns.map((c) => csvCell(next.value[c.key], c.kind)));
        }
        // A lone CR or LF is a line break to a spreadsheet: quote it too (RFC 4180 §2.6).
        const text = stringify(records, { header: first, columns: headers, record_delimiter: "\r\n", quoted_match: /[\r\n]/ });
        first = false;
        if (text.length > 0) controller.enqueue(encoder.encode(text));
        if (done) controller.close();
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 1 },
  );
}

/** A download Response of `rows` as CSV. */
export function csvResponse<T>(report: string, rows: Iterable<T>, columns: ReadonlyArray<CsvColumn<T>>, signal?: AbortSignal): Response {
  return new Response(csvStream(rows, columns, signal), { headers: csvHeaders(report) });
}

function csvHeaders(report: string): Record<string, string> {
  return {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${csvFilename(report)}"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  };
}

/**
 * Columns of a raw-row CSV: rows are arrays in column order (better-sqlite3 `.raw()`),
 * so no object is built per row. `boolean` cells hold 0/1.
 */
export interface RawCsvColumn {
  header: string;
  kind?: "decimal" | "boolean";
}

const PAD3 = ["000", "00", "0", ""];

/** `value.toFixed(3)` of the value rounded to 3 places (what the JSON rows hold), fast. */
export function fixed3(value: number): string {
  const m = Math.round(value * 1000);
  if (!Number.isSafeInteger(m)) return (m / 1000).toFixed(3);
  const neg = m < 0;
  const a = neg ? -m : m;
  const int = Math.floor(a / 1000);
  const frac = String(a - int * 1000);
  return `${neg ? "-" : ""}${int}.${PAD3[frac.length]}${frac}`;
}

const RAW_CHUNK_ROWS = 4096;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One RFC 4180 field, quoted exactly when csvStream's csv-stringify settings quote it:
 * it holds a quote, the delimiter, a CR or a LF. The tests hold the two writers to the
 * same bytes.
 */
export function quoteField(v: string): string {
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** A web ReadableStream of CSV bytes from raw rows; same quoting, neutralising, backpressure
 * and abort as `csvStream`. */
export function csvRawStream(rows: Iterable<unknown[]>, columns: ReadonlyArray<RawCsvColumn>, signal?: AbortSignal): ReadableStream<Uint8Array> {
  const iterator = rows[Symbol.iterator]();
  const kinds = columns.map((c) => (c.kind === "decimal" ? 1 : c.kind === "boolean" ? 2 : 0));
  const width = columns.length;
  const encoder = new TextEncoder();
  let first = true;
  let done = false;
  const stop = () => {
    if (done) return;
    done = true;
    iterator.return?.();
  };
  signal?.addEventListener("abort", stop, { once: true });
  const cell = (v: unknown, kind: number): string => {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") return kind === 1 ? fixed3(v) : kind === 2 ? (v ? "true" : "false") : String(v);
    return quoteField(typeof v === "string" ? neutralise(v) : csvCell(v));
  };
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (done || signal?.aborted) {
          stop();
          controller.close();
          return;
        }
        // Rows are written by hand (the hot loop of the largest export); the header by csv-stringify.
        let text = first ? stringify([columns.map((c) => c.header)], { record_delimiter: "\r\n" }) : "";
        first = false;
        for (let n = 0; n < RAW_CHUNK_ROWS; n++) {
          const next = iterator.next();
          if (next.done) {
            done = true;
            break;
          }
          const r = next.value;
          let line = cell(r[0], kinds[0]);
          for (let c = 1; c < width; c++) line += "," + cell(r[c], kinds[c]);
          text += line + "\r\n";
        }
        if (text.length > 0) controller.enqueue(encoder.encode(text));
        if (done) controller.close();
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: 1 },
  );
}

/** A download Response of raw rows as CSV. */
export function csvRawResponse(report: string, rows: Iterable<unknown[]>, columns: ReadonlyArray<RawCsvColumn>, signal?: AbortSignal): Response {
  return new Response(csvRawStream(rows, columns, signal), { headers: csvHeaders(report) });
}
