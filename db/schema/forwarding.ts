import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * ClickHouse mode (CLICKHOUSE_URL): how far each stream of locally stored facts has
 * reached ClickHouse. Webhook deliveries are made durable in SQLite before the 200
 * (lib/ingest); the forwarder (lib/ingest/forwarder.ts) copies them on in pk order
 * and moves `last_pk` only after ClickHouse accepted the batch. pks grow in commit
 * order (one writer at a time, AUTOINCREMENT), so "everything up to last_pk" is exact.
 */
export const clickhouseForwarding = sqliteTable("clickhouse_forwarding", {
  /** `deliveries` (webhook_deliveries.pk), `recordings` (recordings.pk) or `client_sessions` (client_sessions.seq: a change stamp). */
  stream: text("stream", { enum: ["deliveries", "recordings", "client_sessions"] }).primaryKey(),
  /** Every row with pk ≤ last_pk is in ClickHouse. */
  lastPk: integer("last_pk").notNull().default(0),
  /** Rows forwarded so far (diagnostics). */
  forwarded: integer("forwarded").notNull().default(0),
  /** Consecutive failed attempts (0 after a success): drives the back-off. */
  failures: integer("failures").notNull().default(0),
  /** Why the last attempt failed (never a credential: see lib/ingest/forwarder.ts). */
  lastError: text("last_error"),
  lastAttemptMs: integer("last_attempt_ms"),
  lastSuccessMs: integer("last_success_ms"),
  /** When the forwarder tries again after a failure. */
  nextAttemptMs: integer("next_attempt_ms"),
});

export type ClickhouseForwardingRow = typeof clickhouseForwarding.$inferSelect;
