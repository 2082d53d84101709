/**
 * The ClickHouse warehouse (CLICKHOUSE_URL): the connection, the schema and its
 * migrations, the one SQL value encoder, and the copy from SQLite. Reports over it live
 * in lib/analytics/engines/clickhouse. Decision record: docs/decisions/0014-clickhouse-warehouse.md.
 */
export { clickhouse, clickHouseConfig, clickHouseConfigured, closeClickHouse, openClickHouse, ClickHouseError, type ClickHouse } from "./client";
export { parseClickHouseConfig, type ClickHouseConfig } from "./config";
export { ensureClickHouseSchema } from "./ensure";
export { migrateClickHouse, applyMigrations, type MigrationReport } from "./migrate";
export { CALLS, RECORDINGS, EVENT_COUNTS, WEBHOOK_DELIVERIES, FACT_TABLES, localName, qualified, type Placement, type TableSpec } from "./schema";
export { sql, raw, join, and, array, literal, stringLiteral, integerLiteral, Sql, type SqlValue } from "./sql";
export { callRow, callTombstone, recordingRow, eventCountRow, deliveryRow, thousandths, type CallFact, type ParticipantFact, type RecordingFact, type DeliveryFact } from "./rows";
