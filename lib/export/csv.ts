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
        const text = stringify(records, { header: first, columns: headers, record_delimiter: "\r\n" });
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
  return new Response(csvStream(rows, columns, signal), {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${csvFilename(report)}"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
