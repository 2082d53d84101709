import type { CsvColumn, RawCsvColumn } from "@/lib/export/csv-column";
import {
  APP_COLUMNS, AWAITING_RECORDING_COLUMNS, BREAKDOWN_COLUMNS, CALL_RAW_COLUMNS, CLIENT_COLUMNS, COMBINED_PARTICIPANT_COLUMNS, DAILY_COLUMNS, DURATION_COLUMNS,
  ENGAGEMENT_COLUMNS, HEATMAP_COLUMNS, PARTICIPANT_COLUMNS, RECORDING_COLUMNS, RECORDING_SUMMARY_COLUMNS, TOTALS_COLUMNS,
} from "./csv-columns";
import type {
  AppUsageRow, AwaitingRecordingRow, BreakdownRow, CallListJsonRow, CallListRow, ClientRow, CombinedParticipantRow, DailyUsageRow, DurationBucketRow, EngagementBucketRow,
  HeatmapCell, Page, ParticipantUsageRow, RecordingRow, RecordingSummary, TotalsCsvRow, TotalsReport,
} from "./report-types";

/**
 * The one table of reports. Per report: its name (the key), its route under /api/v1,
 * which of the report-only query parameters it reads, the type of its JSON answer and
 * of its CSV rows, and its CSV columns. Everything else is derived from it: the CSV
 * writers (report-csv-writers.ts), the token fast path's routes (REPORT_ROUTES, below), the
 * dashboard's URLs and the row type of every `useReport` (lib/ui/reports.ts,
 * components/use-report.ts). report-registry.test.ts walks app/api/v1 and this table
 * both ways. Client-safe: it imports only data (the CSV columns) and types.
 *
 * How to add a report: README.md, "Adding a report".
 */

/** The calls list's sort keys (`sort`); the participants reports read `minutes` and sort by calls otherwise. */
export const SORT_KEYS = ["start", "duration", "participants", "minutes"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** Most `app` values one query may name: the reports' filters and the ops pages' alike. */
export const MAX_APPS_PER_QUERY = 100;

/**
 * Query parameters only some reports read; every report reads the common filters
 * (filters.ts) and ignores these unless it lists them. `page`: the JSON is one page
 * (`page`, `perPage`, `sort`, `order`; the CSV is every row). `person`: the uid search of
 * the participants reports. `compare`: the period the totals compare with.
 */
export type ReportParam = "page" | "person" | "compare";

/**
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
export type CsvKind = "rows" | "raw";

export interface RegistryEntry<Json, Row, Kind extends CsvKind> {
  /** The route under /api/v1 (app/api/v1/<path>/route.ts calls handleReport with the name). */
  path: string;
  params: readonly ReportParam[];
  csv: Kind extends "raw" ? { kind: Kind; columns: readonly RawCsvColumn[] } : { kind: Kind; columns: ReadonlyArray<CsvColumn<Row>> };
  /** Types only, never set: what the JSON answer and a CSV row are. */
  types?: { json: Json; row: Row };
}

function rows<Json, Row>(path: string, columns: ReadonlyArray<CsvColumn<Row>>, params: readonly ReportParam[] = []): RegistryEntry<Json, Row, "rows"> {
  return { path, params, csv: { kind: "rows", columns } };
}

function raw<Json, Row>(path: string, columns: readonly RawCsvColumn[], params: readonly ReportParam[] = []): RegistryEntry<Json, Row, "raw"> {
  return { path, params, csv: { kind: "raw", columns } };
}

type Data<T> = { data: T };

export const REPORT_REGISTRY = {
  calls: raw<Page<CallListJsonRow>, CallListRow>("calls", CALL_RAW_COLUMNS, ["page"]),
  participants: rows<Page<ParticipantUsageRow>, ParticipantUsageRow>("usage/participants", PARTICIPANT_COLUMNS, ["page", "person"]),
  /** Each uid once across the apps it is used in (the participants rows of that uid, summed). */
  "participants-combined": rows<Page<CombinedParticipantRow>, CombinedParticipantRow>("usage/participants/combined", COMBINED_PARTICIPANT_COLUMNS, ["page", "person"]),
  apps: rows<Data<AppUsageRow[]>, AppUsageRow>("usage/apps", APP_COLUMNS),
  daily: rows<Data<DailyUsageRow[]>, DailyUsageRow>("usage/daily", DAILY_COLUMNS),
  recordings: rows<Page<RecordingRow>, RecordingRow>("recordings", RECORDING_COLUMNS, ["page"]),
  breakdowns: rows<Data<BreakdownRow[]>, BreakdownRow>("breakdowns", BREAKDOWN_COLUMNS),
  durations: rows<Data<DurationBucketRow[]>, DurationBucketRow>("insights/durations", DURATION_COLUMNS),
  heatmap: rows<Data<HeatmapCell[]>, HeatmapCell>("insights/heatmap", HEATMAP_COLUMNS),
  engagement: rows<Data<EngagementBucketRow[]>, EngagementBucketRow>("insights/engagement", ENGAGEMENT_COLUMNS),
  totals: rows<TotalsReport, TotalsCsvRow>("insights/totals", TOTALS_COLUMNS, ["compare"]),
  /** The platform's recording flag against the links the webhooks delivered (one row). */
  "recording-summary": rows<Data<RecordingSummary>, RecordingSummary>("recordings/summary", RECORDING_SUMMARY_COLUMNS),
  /** Flagged calls whose link has not arrived, newest first. */
  "recordings-awaiting": rows<Page<AwaitingRecordingRow>, AwaitingRecordingRow>("recordings/awaiting", AWAITING_RECORDING_COLUMNS, ["page"]),
  /** Clients and platforms participants joined with, per app (the join webhooks' initial_config). */
  clients: rows<Data<ClientRow[]>, ClientRow>("insights/clients", CLIENT_COLUMNS),
};

export type ReportName = keyof typeof REPORT_REGISTRY;

export const REPORT_NAMES = Object.keys(REPORT_REGISTRY) as ReportName[];

type TypesOf<N extends ReportName> = NonNullable<(typeof REPORT_REGISTRY)[N]["types"]>;

/** A report's JSON answer, exactly as its route sends it. */
export type ReportJson<N extends ReportName> = TypesOf<N>["json"];

/** A report's CSV row as an object (for a `raw` CSV: the row its arrays stand for). */
export type ReportRow<N extends ReportName> = TypesOf<N>["row"];

/** A report's CSV kind. */
export type ReportCsvKind<N extends ReportName> = (typeof REPORT_REGISTRY)[N]["csv"]["kind"];

/** The path a report is served at, e.g. `/api/v1/usage/apps`. */
export function reportRoute(name: ReportName): string {
  return `/api/v1/${REPORT_REGISTRY[name].path}`;
}

/**
 * Each report by the path app/api/v1 serves it at (each route file calls handleReport
 * with its name; report-registry.test.ts holds the route files and the table together).
 * The lean API path (lib/server/api-fast-path.ts) answers token requests for these paths itself.
 */
export const REPORT_ROUTES: Readonly<Record<string, ReportName>> = Object.fromEntries(REPORT_NAMES.map((name) => [reportRoute(name), name]));
