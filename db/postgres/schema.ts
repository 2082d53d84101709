import { getTableColumns, getTableName } from "drizzle-orm";
import { bigint, foreignKey, pgSequence, pgTable, text } from "drizzle-orm/pg-core";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { alertEvents, alertOutbox, alertRules } from "../schema/alerts";
import { apps } from "../schema/apps";
import { apiTokens, auditLog, endedSessions, savedViews, signinFailures, userAppGrants, userPreferences, users } from "../schema/auth";
import { priceSheets, statementAdjustments, statements } from "../schema/billing";
import { recordings } from "../schema/calls";
import { clientSessions } from "../schema/client-sessions";
import { clickhouseForwarding } from "../schema/forwarding";
import { eventCounts, liveOccupants, liveSessions, webhookDeliveries, webhookRejections } from "../schema/ingest";
import { syncLocks, syncRuns } from "../schema/sync";
import { derivePgTable } from "./derive";

/**
 * Callboard's own state in Postgres (DATABASE_URL; docs/decisions/0035-state-in-postgres.md):
 * every table of db/schema but the facts that live in ClickHouse when Postgres is used
 * (`calls`, `call_participants`) and what only the embedded SQLite engine needs
 * (`analytics_changes`, `warehouse_backfills`). Each Postgres table is derived from its
 * SQLite definition (db/postgres/derive.ts): one definition per table.
 *
 * The order is the order of foreign keys (parents first): derivation, the copy from a
 * SQLite file (lib/postgres/copy.ts) and its count check follow it.
 */
export const STATE_TABLES: readonly SQLiteTable[] = [
  apps,
  users,
  userAppGrants,
  userPreferences,
  savedViews,
  apiTokens,
  auditLog,
  signinFailures,
  endedSessions,
  syncRuns,
  syncLocks,
  webhookDeliveries,
  webhookRejections,
  recordings,
  eventCounts,
  liveSessions,
  liveOccupants,
  clientSessions,
  clickhouseForwarding,
  alertRules,
  alertEvents,
  alertOutbox,
  priceSheets,
  statements,
  statementAdjustments,
];

const derived = new Map<string, PgTable>();
for (const table of STATE_TABLES) {
  const twin = derivePgTable(table, derived);
  derived.set(getTableName(twin), twin);
}

/** The Postgres twin of a state table, by table name. */
export function pgStateTable(name: string): PgTable {
  const table = derived.get(name);
  if (!table) throw new Error(`${name} is not one of Callboard's state tables in Postgres`);
  return table;
}

// Named exports: drizzle-kit (drizzle.postgres.config.ts) finds the tables it generates migrations for by export.
export const pgApps = pgStateTable("apps");
export const pgUsers = pgStateTable("users");
export const pgUserAppGrants = pgStateTable("user_app_grants");
export const pgUserPreferences = pgStateTable("user_preferences");
export const pgSavedViews = pgStateTable("saved_views");
export const pgApiTokens = pgStateTable("api_tokens");
export const pgAuditLog = pgStateTable("audit_log");
export const pgSigninFailures = pgStateTable("signin_failures");
export const pgEndedSessions = pgStateTable("ended_sessions");
export const pgSyncRuns = pgStateTable("sync_runs");
export const pgSyncLocks = pgStateTable("sync_locks");
export const pgWebhookDeliveries = pgStateTable("webhook_deliveries");
export const pgWebhookRejections = pgStateTable("webhook_rejections");
export const pgRecordings = pgStateTable("recordings");
export const pgEventCounts = pgStateTable("event_counts");
export const pgLiveSessions = pgStateTable("live_sessions");
export const pgLiveOccupants = pgStateTable("live_occupants");
export const pgClientSessions = pgStateTable("client_sessions");
export const pgClickhouseForwarding = pgStateTable("clickhouse_forwarding");
export const pgAlertRules = pgStateTable("alert_rules");
export const pgAlertEvents = pgStateTable("alert_events");
export const pgAlertOutbox = pgStateTable("alert_outbox");
export const pgPriceSheets = pgStateTable("price_sheets");
export const pgStatements = pgStateTable("statements");
export const pgStatementAdjustments = pgStateTable("statement_adjustments");

/**
 * Postgres only, no SQLite twin: how far `npm run warehouse -- copy --to postgres` got
 * with each table (lib/postgres/copy.ts), written in the same transaction as each batch
 * so that a rerun resumes after the last batch committed.
 */
export const stateCopyProgress = pgTable("state_copy_progress", {
  tableName: text("table_name").primaryKey(),
  /** The last copied row's key, as JSON (an array: the key's columns in order). */
  lastKey: text("last_key").notNull(),
  copied: bigint("copied", { mode: "number" }).notNull().default(0),
  updatedMs: bigint("updated_ms", { mode: "number" }).notNull(),
});

/**
 * Postgres only, no SQLite twin: the webhook deliveries not yet in ClickHouse
 * (lib/ingest/postgres-inbox.ts). SQLite's forwarder follows a pk cursor because its pks
 * grow in commit order; Postgres sequences do not (two servers insert at once), so each
 * delivery is queued here in its own transaction, and a forwarder claims rows with
 * `FOR UPDATE SKIP LOCKED` and deletes them in the transaction that saw ClickHouse accept
 * them (docs/decisions/0035-state-in-postgres.md §6).
 */
function deliveryPkColumn(): PgColumn {
  const pk = (getTableColumns(pgWebhookDeliveries) as Record<string, PgColumn>).pk;
  if (!pk) throw new Error("webhook_deliveries has no pk column");
  return pk;
}

export const deliveryForwardQueue = pgTable(
  "delivery_forward_queue",
  {
    deliveryPk: bigint("delivery_pk", { mode: "number" }).primaryKey(),
  },
  (t) => [foreignKey({ columns: [t.deliveryPk], foreignColumns: [deliveryPkColumn()] }).onDelete("cascade")],
);

/**
 * Postgres only: the change stamps of `client_sessions.seq` (lib/ingest/postgres-client-sessions.ts).
 * SQLite takes `max(seq) + 1` (one writer); two servers doing that at once would take the
 * same stamp and break the unique index, so each insert and update takes `nextval` here.
 * The copy from SQLite moves it past the copied stamps (lib/postgres/copy.ts).
 */
export const clientSessionSeqStamp = pgSequence("client_sessions_seq_stamp", { startWith: 1 });
