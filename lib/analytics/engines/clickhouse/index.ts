/**
 * The ClickHouse analytics engine (CLICKHOUSE_URL): every report of lib/analytics/report-csv-writers.ts
 * answered by SQL over the ClickHouse warehouse (lib/clickhouse), apps and scopes from SQLite.
 * The only entry into this folder (docs/decisions/0014-clickhouse-warehouse.md).
 */
export { createClickHouseEngine, type ClickHouseEngineOptions } from "./engine";
export { clickHouseEventCounts } from "./reports/events";
