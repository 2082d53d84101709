/**
 * The ClickHouse analytics engine (CLICKHOUSE_URL): every report of lib/analytics/report-csv-writers.ts
 * answered by SQL over the ClickHouse warehouse (lib/clickhouse), apps and scopes from SQLite.
 * The only entry into this folder (docs/decisions/0014-clickhouse-warehouse.md).
 */
export { createClickHouseEngine, type ClickHouseEngineOptions } from "./engine";
export { clickHouseEventCounts } from "./reports/events";
/** The heatmap with its source chosen: the bench's A/B of the pre-aggregate against the signed rows (bench/clickhouse-v2.ts). */
export { getConcurrencyHeatmap, type HeatmapSource } from "./reports/heatmap";
