/**
 * The memory engine's reports called directly: synchronous functions of a connection,
 * with the filter model beside them — what its tests and the worker thread's table
 * (report-answerers.ts) build on. Code outside this folder asks the engine instead
 * (lib/analytics/engine.ts).
 */
export { parseFilters, filters, DEFAULT_FILTERS, MAX_PER_PAGE, SORT_KEYS, type Filters, type SortKey } from "../../filters";
export type { CallListRow, CallDetail, Page, Pagination } from "../../report-types";
export { getCalls, getCall, iterateCalls, countCalls } from "./reports/calls";
export { callsCsvBatches, iterateCallsRaw } from "./reports/calls-csv";
export { getParticipantUsage, getAppUsage, getDailyUsage } from "./reports/usage";
export { getTotals, getBreakdowns, getDurationDistribution, getEngagement } from "./reports/insights";
export { getConcurrencyHeatmap } from "./reports/heatmap";
export { getRecordings, iterateRecordings } from "./reports/recordings";
export { analyticsStore, resetAnalyticsStore } from "./store/load";
export { storeBytes, type AnalyticsStore } from "./store/store";
