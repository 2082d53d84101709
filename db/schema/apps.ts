import { sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * A tenant app on the platform. `pk` is the compact integer every fact table
 * references (cheaper to index and join than the platform's string app id).
 * Secrets are stored encrypted (lib/crypto/secrets.ts); `*_last4` is what may be shown.
 * Operational timestamps of our own are epoch milliseconds (`*_ms`); platform times
 * elsewhere stay in the platform's epoch seconds.
 */
export const apps = sqliteTable("apps", {
  pk: integer("pk").primaryKey({ autoIncrement: true }),
  appId: text("app_id").notNull().unique(),
  name: text("name").notNull(),
  region: text("region", { enum: ["us", "eu", "in"] }).notNull(),
  apiKeyEnc: text("api_key_enc").notNull(),
  apiKeyLast4: text("api_key_last4").notNull(),
  /** Full override of `https://{appid}.call-{region}.{PLATFORM_DOMAIN}/v3`. */
  callsUrl: text("calls_url"),
  /** Optional `onBehalfOf` header sent with every Calls API request. */
  onBehalfOf: text("on_behalf_of"),
  webhookId: text("webhook_id"),
  webhookName: text("webhook_name"),
  webhookEnabled: integer("webhook_enabled", { mode: "boolean" }).notNull().default(true),
  webhookUseBasicAuth: integer("webhook_use_basic_auth", { mode: "boolean" }).notNull().default(false),
  webhookUsername: text("webhook_username"),
  webhookPasswordEnc: text("webhook_password_enc"),
  /** Set once a full backfill finished: later runs may stop paging early. */
  backfillCompletedMs: integer("backfill_completed_ms"),
  /** Last full reconcile (a run that paged everything). */
  lastFullSyncMs: integer("last_full_sync_ms"),
  lastSuccessfulSyncMs: integer("last_successful_sync_ms"),
  createdMs: integer("created_ms").notNull().default(sql`(unixepoch() * 1000)`),
  updatedMs: integer("updated_ms").notNull().default(sql`(unixepoch() * 1000)`),
});

export type AppRow = typeof apps.$inferSelect;
export type NewAppRow = typeof apps.$inferInsert;
