/**
 * The memory engine's reports called directly: synchronous functions of a connection,
 * with the filter model beside them — what its tests and the worker thread's table
 * (reports.ts) build on. Code outside this folder asks the engine instead
 * (lib/analytics/engine.ts).
 */
export { parseFilters, filters, DEFAULT_FILTERS, MAX_PER_PAGE, SORT_KEYS, type Filters, type SortKey } from "../../filters";
export type { CallListRow, CallDetail, Page, Pagination } from "../../report-types";
export { getCalls, getCall, iterateCalls, countCalls } from "./calls";
export { callsCsvBatches, iterateCallsRaw } from "./calls-csv";
export { getParticipantUsage, getAppUsage, getDailyUsage } from "./usage";
export { getTotals, getBreakdowns, getDurationDistribution, getConcurrencyHeatmap, getEngagement } from "./insights";
export { getRecordings, iterateRecordings } from "./recordings";
export { analyticsStore, resetAnalyticsStore, storeBytes, type AnalyticsStore } from "./store";
