/**
 * The analytics API the routes, pages and other parts build on: one filter model
 * (`parseFilters`), the scope of a caller's apps, the rows every report answers with,
 * and the engine that answers them (engine.ts). Documented in docs/api.md.
 */
export { parseFilters, filters, DEFAULT_FILTERS, MAX_PER_PAGE, SORT_KEYS, type Filters, type SortKey, type SearchParamsInput } from "./filters";
export { readResolvedApps, readVisibleApps, resolveApps, visibleApps, type Scope, type AppRef } from "./scope";
export {
  ENGAGEMENT_BUCKETS, MAX_CROSSINGS, round3,
  type AppUsageRow, type BreakdownRow, type CallDetail, type CallListRow, type CallParticipantDetail, type CallRef, type DailyUsageRow, type DurationBucketRow,
  type EngagementBucketRow, type HeatmapCell, type Page, type Pagination, type ParticipantUsageRow, type RecordingDetail, type RecordingRow, type Totals,
  type TotalsCsvRow, type TotalsReport, type CallEventRow, type CallClientRow, type ClientRow, type CombinedParticipantRow, type RecordingFacts, type CallListJsonRow, type RecordingSummary, type AwaitingRecordingRow,
} from "./report-types";
export { REPORT_CSV_WRITERS, type ReportName, type ReportJson, type ReportRow, type CsvBatch, type CsvSource } from "./report-csv-writers";
export { analyticsEngine, type AnalyticsEngine, type EngineHealth, type EngineKind } from "./engine";
export { DURATION_BUCKETS, TYPES, MODES, STATUSES, RECEIVER_TYPES } from "./dims";
