import { csvBatchStream, csvRawStream, csvStream, type CsvColumn, type CsvContext, type RawCsvColumn, type RowBatch } from "@/lib/export/csv";
import {
  APP_COLUMNS, AWAITING_RECORDING_COLUMNS, BREAKDOWN_COLUMNS, CALL_RAW_COLUMNS, DAILY_COLUMNS, DURATION_COLUMNS, ENGAGEMENT_COLUMNS, HEATMAP_COLUMNS,
  CLIENT_COLUMNS, COMBINED_PARTICIPANT_COLUMNS, PARTICIPANT_COLUMNS, RECORDING_COLUMNS, RECORDING_SUMMARY_COLUMNS, TOTALS_COLUMNS,
} from "./csv-columns";
import type {
  AppUsageRow, AwaitingRecordingRow, ClientRow, CombinedParticipantRow, BreakdownRow, CallListJsonRow, CallListRow, DailyUsageRow, DurationBucketRow, EngagementBucketRow, HeatmapCell, Page,
  ParticipantUsageRow, RecordingRow, RecordingSummary, TotalsCsvRow, TotalsReport,
} from "./report-types";

/**
 * The table of reports: every analytics route's report by name, the type of its JSON
 * answer and of its CSV rows, and its CSV columns. Engine-agnostic: an engine
 * (lib/analytics/engine.ts) answers a report by name; the route writes what it answers.
 *
 * A report's CSV is one of two kinds:
 * - `rows`: the report's row objects (the JSON's rows, every one: no paging), written
 *   by their keys — every report but the calls list;
 * - `raw`: rows as arrays in the columns' order, or lines an engine already wrote
 *   (`rawCell` of each field, CRLF after each): the calls list, the one export that can
 *   run to tens of millions of rows, where an object per row would be most of the cost.
 *   Its derived columns (labels, ISO times: csv-columns.ts) follow the data columns: an
 *   engine yielding arrays gives only the data columns (the writer derives the rest); an
 *   engine writing its own lines writes the derived cells too (`rawDerived`).
 */
export interface ReportTypes {
  calls: { json: Page<CallListJsonRow>; csv: "raw"; row: CallListRow };
  participants: { json: Page<ParticipantUsageRow>; csv: "rows"; row: ParticipantUsageRow };
  /** Each uid once across the apps it is used in (the participants rows of that uid, summed). */
  "participants-combined": { json: Page<CombinedParticipantRow>; csv: "rows"; row: CombinedParticipantRow };
  apps: { json: { data: AppUsageRow[] }; csv: "rows"; row: AppUsageRow };
  daily: { json: { data: DailyUsageRow[] }; csv: "rows"; row: DailyUsageRow };
  recordings: { json: Page<RecordingRow>; csv: "rows"; row: RecordingRow };
  breakdowns: { json: { data: BreakdownRow[] }; csv: "rows"; row: BreakdownRow };
  durations: { json: { data: DurationBucketRow[] }; csv: "rows"; row: DurationBucketRow };
  heatmap: { json: { data: HeatmapCell[] }; csv: "rows"; row: HeatmapCell };
  engagement: { json: { data: EngagementBucketRow[] }; csv: "rows"; row: EngagementBucketRow };
  totals: { json: TotalsReport; csv: "rows"; row: TotalsCsvRow };
  /** The platform's recording flag against the links the webhooks delivered (one row). */
  "recording-summary": { json: { data: RecordingSummary }; csv: "rows"; row: RecordingSummary };
  /** Flagged calls whose link has not arrived, newest first. */
  "recordings-awaiting": { json: Page<AwaitingRecordingRow>; csv: "rows"; row: AwaitingRecordingRow };
  /** Clients and platforms participants joined with, per app (the join webhooks' initial_config). */
  clients: { json: { data: ClientRow[] }; csv: "rows"; row: ClientRow };
}

export type ReportName = keyof ReportTypes;

/** A report's JSON answer, exactly as its route sends it. */
export type ReportJson<N extends ReportName> = ReportTypes[N]["json"];

/** A report's CSV row as an object (for a `raw` CSV: the row its arrays stand for). */
export type ReportRow<N extends ReportName> = ReportTypes[N]["row"];

/** One batch of a report's CSV as an engine streams it: row objects, or (`raw`) arrays in column order or written lines. */
export type CsvBatch<N extends ReportName> = ReportTypes[N]["csv"] extends "raw" ? RowBatch : ReadonlyArray<ReportRow<N>>;

/** A report's CSV batches, in the CSV's order, pulled as the client reads: plain or async. */
export type CsvSource<N extends ReportName> = Iterable<CsvBatch<N>> | AsyncIterable<CsvBatch<N>>;

/** How a report's CSV is written: its columns and the writer of its kind. */
export interface CsvFormat<N extends ReportName> {
  kind: ReportTypes[N]["csv"];
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
function* rowsOf<Row>(batches: Iterable<ReadonlyArray<Row>>): Generator<Row> {
  for (const b of batches) yield* b;
}

function rowsCsv<Row>(columns: ReadonlyArray<CsvColumn<Row>>) {
  return {
    kind: "rows" as const,
    columns,
    stream: (batches: Batches<ReadonlyArray<Row>>, signal?: AbortSignal, ctx?: CsvContext) =>
      Symbol.asyncIterator in batches ? csvBatchStream(batches, columns, signal, ctx) : csvStream(rowsOf(batches), columns, signal, ctx),
  };
}

function rawCsv(columns: ReadonlyArray<RawCsvColumn>) {
  return { kind: "raw" as const, columns, stream: (batches: Batches<RowBatch>, signal?: AbortSignal, ctx?: CsvContext) => csvRawStream(batches, columns, signal, ctx) };
}

export const REPORTS: { readonly [N in ReportName]: ReportSpec<N> } = {
  calls: { name: "calls", csv: rawCsv(CALL_RAW_COLUMNS) },
  participants: { name: "participants", csv: rowsCsv(PARTICIPANT_COLUMNS) },
  "participants-combined": { name: "participants-combined", csv: rowsCsv(COMBINED_PARTICIPANT_COLUMNS) },
  apps: { name: "apps", csv: rowsCsv(APP_COLUMNS) },
  daily: { name: "daily", csv: rowsCsv(DAILY_COLUMNS) },
  recordings: { name: "recordings", csv: rowsCsv(RECORDING_COLUMNS) },
  breakdowns: { name: "breakdowns", csv: rowsCsv(BREAKDOWN_COLUMNS) },
  durations: { name: "durations", csv: rowsCsv(DURATION_COLUMNS) },
  heatmap: { name: "heatmap", csv: rowsCsv(HEATMAP_COLUMNS) },
  engagement: { name: "engagement", csv: rowsCsv(ENGAGEMENT_COLUMNS) },
  totals: { name: "totals", csv: rowsCsv(TOTALS_COLUMNS) },
  "recording-summary": { name: "recording-summary", csv: rowsCsv(RECORDING_SUMMARY_COLUMNS) },
  "recordings-awaiting": { name: "recordings-awaiting", csv: rowsCsv(AWAITING_RECORDING_COLUMNS) },
  clients: { name: "clients", csv: rowsCsv(CLIENT_COLUMNS) },
};

