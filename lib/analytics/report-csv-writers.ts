import { csvBatchStream, csvRawStream, csvStream, type CsvColumn, type CsvContext, type RawCsvColumn, type RowBatch } from "@/lib/export/csv";
import { REPORT_NAMES, REPORT_REGISTRY, type ReportCsvKind, type ReportName, type ReportRow } from "./report-registry";

/**
 * The CSV writer of every report, derived from the table of reports
 * (report-registry.ts: names, routes, types, columns): server-side, as it pulls in the
 * CSV writers. An engine (lib/analytics/engine.ts) answers a report by name; the route
 * writes what it answers with `REPORT_CSV_WRITERS[name].csv.stream`.
 */

export type { ReportJson, ReportName, ReportRow } from "./report-registry";

/**
 * One batch of a report's CSV as an engine streams it: row objects, or (`raw`) arrays in
 * column order or written lines; an async source (the ClickHouse engine's long CSVs) may
 * also give its lines already written, as UTF-8 bytes, for any report.
 */
export type CsvBatch<N extends ReportName> = ReportCsvKind<N> extends "raw" ? RowBatch : ReadonlyArray<ReportRow<N>> | Uint8Array;

/** A report's CSV batches, in the CSV's order, pulled as the client reads: plain or async. */
export type CsvSource<N extends ReportName> = Iterable<CsvBatch<N>> | AsyncIterable<CsvBatch<N>>;

/** How a report's CSV is written: its columns and the writer of its kind. */
export interface CsvFormat<N extends ReportName> {
  kind: ReportCsvKind<N>;
  columns: ReadonlyArray<CsvColumn<ReportRow<N>>> | ReadonlyArray<RawCsvColumn>;
  /** `ctx`: the zone of the derived ISO columns (default UTC). */
  stream(batches: CsvSource<N>, signal?: AbortSignal, ctx?: CsvContext): ReadableStream<Uint8Array>;
}

export interface ReportSpec<N extends ReportName> {
  /** Names the CSV file (callboard-<name>-<date>.csv) and the route's log lines. */
  name: N;
  csv: CsvFormat<N>;
}

type Batches<B> = Iterable<B> | AsyncIterable<B>;

/** Plain batches as rows, pulled one at a time (csvStream releases the source when the client leaves). */
function* rowsOf<Row>(batches: Iterable<ReadonlyArray<Row> | Uint8Array>): Generator<Row> {
  for (const b of batches) {
    // Written lines come from async sources only (CsvBatch): a plain one giving them is a bug.
    if (b instanceof Uint8Array) throw new TypeError("a plain CSV source gave written lines");
    yield* b;
  }
}

function rowsCsv<Row>(columns: ReadonlyArray<CsvColumn<Row>>) {
  return {
    kind: "rows" as const,
    columns,
    stream: (batches: Batches<ReadonlyArray<Row> | Uint8Array>, signal?: AbortSignal, ctx?: CsvContext) =>
      Symbol.asyncIterator in batches ? csvBatchStream(batches, columns, signal, ctx) : csvStream(rowsOf(batches), columns, signal, ctx),
  };
}

function rawCsv(columns: ReadonlyArray<RawCsvColumn>) {
  return { kind: "raw" as const, columns, stream: (batches: Batches<RowBatch>, signal?: AbortSignal, ctx?: CsvContext) => csvRawStream(batches, columns, signal, ctx) };
}

function writerOf<N extends ReportName>(name: N): ReportSpec<N> {
  const csv = REPORT_REGISTRY[name].csv;
  // The table pairs each kind with its columns; the cast only restates that pairing per name.
  const format = csv.kind === "raw" ? rawCsv(csv.columns as ReadonlyArray<RawCsvColumn>) : rowsCsv(csv.columns as ReadonlyArray<CsvColumn<ReportRow<N>>>);
  return { name, csv: format as unknown as CsvFormat<N> };
}

export const REPORT_CSV_WRITERS = Object.fromEntries(REPORT_NAMES.map((name) => [name, writerOf(name)])) as unknown as { readonly [N in ReportName]: ReportSpec<N> };
