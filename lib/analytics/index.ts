/**
 * The analytics API the routes and the dashboard build on: one filter model
 * (`parseFilters`) and one function per report, each `(db, filters, scope)`.
 * Documented in docs/api.md.
 */
export { parseFilters, filters, DEFAULT_FILTERS, MAX_PER_PAGE, SORT_KEYS, type Filters, type SortKey, type SearchParamsInput } from "./filters";
export { resolveApps, visibleApps, type Scope, type AppRef } from "./query";
export { getCalls, getCall, iterateCalls, countCalls, type CallListRow, type CallDetail, type CallParticipantDetail, type RecordingDetail, type Page, type Pagination } from "./calls";
export { callsCsvBatches, iterateCallsRaw } from "./calls-csv";
export { getParticipantUsage, getAppUsage, getDailyUsage, type ParticipantUsageRow, type AppUsageRow, type DailyUsageRow } from "./usage";
export {
  getTotals, getBreakdowns, getDurationDistribution, getConcurrencyHeatmap, getEngagement, ENGAGEMENT_BUCKETS,
  type Totals, type TotalsReport, type BreakdownRow, type DurationBucketRow, type HeatmapCell, type EngagementBucketRow,
} from "./insights";
export { getRecordings, iterateRecordings, type RecordingRow } from "./recordings";
export { getRecordingSummary, getAwaitingRecordings, withRecordingFacts, type RecordingSummary, type AwaitingRecordingRow, type RecordingFacts } from "./recording-status";
export { DURATION_BUCKETS, TYPES, MODES, STATUSES, RECEIVER_TYPES } from "./dims";
export { analyticsStore, resetAnalyticsStore, storeBytes, type AnalyticsStore } from "./store";
