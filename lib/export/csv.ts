import { stringify } from "csv-stringify/sync";
import { label } from "@/lib/platform/labels";
import { isoFormatter, type IsoFormatter } from "./iso";
import type { CsvColumn, Derivation, RawCsvColumn } from "./csv-column";

export { isoColumn, labelColumn, type CsvColumn, type Derivation, type RawCsvColumn } from "./csv-column";

/**
 * Streaming CSV of any analytics result: rows are pulled from an iterator (better-sqlite3
 * `.iterate()` for the calls list) only as fast as the client reads, so memory stays
 * constant whatever the size; the export stops when the client disconnects.
 * RFC 4180 quoting and UTF-8 by csv-stringify; decimals fixed to 3 places; cells that
 * a spreadsheet would run as a formula (leading =, +, -, @, tab, CR) are prefixed with `'`.
 */

/** What derived cells need: the download's zone. */
export interface CsvContext {
  iso: IsoFormatter;
}

export function csvContext(tz = "UTC"): CsvContext {
  return { iso: isoFormatter(tz) };
}

const UTC = csvContext();

function derive(value: unknown, as: Derivation, ctx: CsvContext): string {
  if (value === null || value === undefined || value === "") return "";
  if (as === "label") return label(String(value));
  const n = typeof value === "number" ? value : Number(value);
  return ctx.iso(as === "isoMs" ? n / 1000 : n);
}

const FORMULA_START = /^[=+\-@\t\r]/;

export function neutralise(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** Exact decimal text: a number to a spreadsheet, never a formula. */
const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

export function csvCell(value: unknown, kind?: "decimal" | "exact"): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (kind === "decimal") return value.toFixed(3);
    return String(value);
  }
  if (kind === "exact" && typeof value === "string" && DECIMAL_TEXT.test(value)) return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  return neutralise(String(value));
}

const headerOf = <T>(c: CsvColumn<T>): string => c.header ?? ("key" in c ? c.key : "");

/** A row's cell of a column (data or derived), as every object-row writer writes it. */
function cellWriter(ctx: CsvContext) {
  return <T>(row: T, c: CsvColumn<T>): string =>
    "derived" in c ? neutralise(derive(row[c.derived.of], c.derived.as, ctx)) : csvCell(row[c.key], c.exact ? "exact" : c.kind);
}

/** `callboard-<report>-<YYYY-MM-DD>.csv` (today, UTC): routes without the filter model (csvDownloadName in lib/analytics/csv-filename.ts for those with it). */
export function csvFilename(report: string, now = new Date()): string {
  return `callboard-${report}-${now.toISOString().slice(0, 10)}.csv`;
}

export interface CsvResponseOptions {
  /** The download's file name (default `csvFilename(report)`). */
  filename?: string;
  /** The zone of the derived ISO columns (default UTC). */
  tz?: string;
}

const CHUNK_ROWS = 512;

/** A web ReadableStream of CSV bytes pulled from `rows`; `signal` aborts it. */
export function csvStream<T>(rows: Iterable<T>, columns: ReadonlyArray<CsvColumn<T>>, signal?: AbortSignal, ctx: CsvContext = UTC): ReadableStream<Uint8Array> {
  const iterator = rows[Symbol.iterator]();
  const headers = columns.map(headerOf);
  const cellOf = cellWriter(ctx);
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
          records.push(columns.map((c) => cellOf(next.value, c)));
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

/**
 * The same CSV as `csvStream`, from rows that arrive in batches from an async source (an
 * analytics engine's CSV: its worker thread, a database stream): each batch is written
 * with csvStream's cells and quoting, and streamed by csvRawStream (one batch per pull).
 * A batch may also be lines the source wrote itself with those cells (UTF-8 bytes, each
 * line ending in CRLF): sent on as they are.
 */
export function csvBatchStream<T>(
  batches: AsyncIterable<readonly T[] | Uint8Array>,
  columns: ReadonlyArray<CsvColumn<T>>,
  signal?: AbortSignal,
  ctx: CsvContext = UTC,
): ReadableStream<Uint8Array> {
  const cellOf = cellWriter(ctx);
  async function* lines(): AsyncGenerator<string | Uint8Array> {
    for await (const batch of batches) {
      if (batch instanceof Uint8Array) {
        yield batch;
        continue;
      }
      const records = batch.map((row) => columns.map((c) => cellOf(row, c)));
      yield stringify(records, { record_delimiter: "\r\n", quoted_match: /[\r\n]/ });
    }
  }
  return csvRawStream(lines(), columns.map((c) => ({ header: headerOf(c) })), signal);
}

/** A download Response of `rows` as CSV. */
export function csvResponse<T>(report: string, rows: Iterable<T>, columns: ReadonlyArray<CsvColumn<T>>, signal?: AbortSignal, options: CsvResponseOptions = {}): Response {
  return new Response(csvStream(rows, columns, signal, csvContext(options.tz)), { headers: csvHeaders(options.filename ?? csvFilename(report)) });
}

/** The headers of a CSV download (named `filename`, never cached). */
export function csvHeaders(filename: string): Record<string, string> {
  return {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${filename.replace(/[^A-Za-z0-9._+-]/g, "-")}"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  };
}

/**
 * The derived cells of a raw row, each after a comma (appended to its data cells): what
 * csvRawStream writes, for a source that writes its own lines (the calls CSV's reader).
 */
export function rawDerived(columns: ReadonlyArray<RawCsvColumn>, ctx: CsvContext = UTC): (r: ArrayLike<unknown>) => string {
  const derived = columns.flatMap((c) => (c.derived ? [c.derived] : []));
  if (columns.findIndex((c) => c.derived) !== -1 && columns.slice(columns.findIndex((c) => c.derived)).some((c) => !c.derived)) {
    throw new Error("derived CSV columns must come after the data columns");
  }
  // The hot loop of the largest export (ten million rows): one writer per column, each as
  // cheap as its kind allows. An ISO time is digits, T, colons and an offset: never
  // quoted or neutralised. A label is one of a few codes: its cell is written once per code.
  const cells = derived.map((d): ((v: unknown) => string) => {
    if (d.as === "label") {
      const memo = new Map<unknown, string>();
      return (v) => {
        let cell = memo.get(v);
        if (cell === undefined) {
          cell = labelCell(v);
          if (memo.size < 1024) memo.set(v, cell);
        }
        return cell;
      };
    }
    const ms = d.as === "isoMs";
    return (v) => (v === null || v === undefined || v === "" ? "" : ctx.iso(ms ? Number(v) / 1000 : typeof v === "number" ? v : Number(v)));
  });
  const of = derived.map((d) => d.of);
  // Joined, not concatenated: one flat string per row (a rope of small pieces per row made
  // the batch's UTF-8 encoding and the GC most of the export's time).
  const parts: string[] = new Array(cells.length + 1).fill("");
  return (r) => {
    for (let i = 0; i < cells.length; i++) parts[i + 1] = cells[i](r[of[i]]);
    return parts.join(",");
  };
}

/** A `label` derived cell of a raw row's value, as csvRawStream writes it. */
export function labelCell(v: unknown): string {
  return quoteField(neutralise(derive(v, "label", UTC)));
}

/** The columns a raw row holds (the derived ones are computed from them). */
export function dataColumns(columns: ReadonlyArray<RawCsvColumn>): RawCsvColumn[] {
  return columns.filter((c) => !c.derived);
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

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One RFC 4180 field, quoted exactly when csvStream's csv-stringify settings quote it:
 * it holds a quote, the delimiter, a CR or a LF. The tests hold the two writers to the
 * same bytes.
 */
export function quoteField(v: string): string {
  return NEEDS_QUOTES.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** Codes of RawCsvColumn kinds (`rawCell`'s second argument). */
export const RAW_KIND = { plain: 0, decimal: 1, boolean: 2 } as const;

export function rawKind(c: RawCsvColumn): number {
  return c.kind === "decimal" ? RAW_KIND.decimal : c.kind === "boolean" ? RAW_KIND.boolean : RAW_KIND.plain;
}

/** One field of a raw row, as csvRawStream writes it (a source that writes its own lines uses this too). */
export function rawCell(v: unknown, kind: number): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return kind === RAW_KIND.decimal ? fixed3(v) : kind === RAW_KIND.boolean ? (v ? "true" : "false") : String(v);
  return quoteField(typeof v === "string" ? neutralise(v) : csvCell(v));
}

/**
 * Raw rows in batches (each batch one chunk of the stream), from a plain or an async
 * source: the calls CSV's batches may wait for the analytics worker (calls-csv.ts). A
 * batch is rows, or CSV lines already written with `rawCell` (each ending in CRLF), as text
 * or as UTF-8 bytes (written on another thread: sent on as they are).
 */
export type RowBatch = unknown[][] | string | Uint8Array;
export type RowBatches = Iterable<RowBatch> | AsyncIterable<RowBatch>;

function batchIterator(rows: RowBatches): Iterator<RowBatch> | AsyncIterator<RowBatch> {
  return Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
}

/** A web ReadableStream of CSV bytes from batches of raw rows; same quoting, neutralising, backpressure
 * and abort as `csvStream`. */
export function csvRawStream(rows: RowBatches, columns: ReadonlyArray<RawCsvColumn>, signal?: AbortSignal, ctx: CsvContext = UTC): ReadableStream<Uint8Array> {
  const iterator = batchIterator(rows);
  let cancelled = false;
  const kinds = dataColumns(columns).map(rawKind);
  const width = kinds.length;
  const derivedOf = rawDerived(columns, ctx);
  const encoder = new TextEncoder();
  let first = true;
  let done = false;
  const stop = () => {
    if (done) return;
    done = true;
    // Releases the SQLite statement / the source's pending work; an async source settles on its own.
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  };
  signal?.addEventListener("abort", stop, { once: true });
  const cell = rawCell;
  return new ReadableStream<Uint8Array>(
    {
      // Called only when the consumer wants more: the client's reads drive the source.
      async pull(controller) {
        if (done || signal?.aborted) {
          stop();
          controller.close();
          return;
        }
        // Rows are written by hand (the hot loop of the largest export); the header by csv-stringify.
        let text = first ? stringify([columns.map((c) => c.header)], { record_delimiter: "\r\n" }) : "";
        first = false;
        // Until there is something to send: a pull that enqueues nothing is not called again.
        const before = text.length;
        while (!done) {
          const next = await iterator.next();
          if (cancelled) return; // the consumer went away while the batch was on its way
          if (next.done) done = true;
          else if (next.value instanceof Uint8Array) {
            // The header goes out with the first rows, in one chunk.
            const bytes = text.length > 0 ? Buffer.concat([encoder.encode(text), next.value]) : next.value;
            text = "";
            if (bytes.length > 0) {
              controller.enqueue(bytes);
              break;
            }
          } else {
            if (typeof next.value === "string") text += next.value;
            else {
              for (const r of next.value) {
                let line = cell(r[0], kinds[0]);
                for (let c = 1; c < width; c++) line += "," + cell(r[c], kinds[c]);
                text += line + derivedOf(r) + "\r\n";
              }
            }
            if (text.length > before) break;
          }
        }
        if (text.length > 0) controller.enqueue(encoder.encode(text));
        if (done) controller.close();
      },
      cancel() {
        cancelled = true;
        stop();
      },
    },
    { highWaterMark: 1 },
  );
}
