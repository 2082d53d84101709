import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/**
 * The push side (lib/ingest). Every delivery answered 200 is a row of
 * `webhook_deliveries`, written in the same transaction as its effects; a repeat of a
 * delivery (same idempotency key) only bumps `repeat_count`. Live call state lives in
 * its own tables so estimates never reach the `calls` rows analytics count.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    /** Per-trigger key (see lib/ingest/keys.ts): a repeat of the same event has the same key. */
    idemKey: text("idem_key").notNull(),
    trigger: text("trigger").notNull(),
    /** The envelope's `webhook` (the platform's id of the webhook that delivered it). */
    webhook: text("webhook").notNull(),
    /** Envelope `type` (`call` / `meet`) when present. */
    type: text("type"),
    sessionId: text("session_id"),
    /** `applied`: effects written; `stored`: kept only (unknown trigger); `failed`: kept, applying threw. */
    outcome: text("outcome", { enum: ["applied", "stored", "failed"] }).notNull(),
    /** The body exactly as received (UTF-8 JSON). */
    body: text("body").notNull(),
    receivedMs: integer("received_ms").notNull(),
    /** Deliveries after the first with the same key: answered 200, changed nothing else. */
    repeatCount: integer("repeat_count").notNull().default(0),
    lastReceivedMs: integer("last_received_ms").notNull(),
  },
  (t) => [
    // Idempotency: the insert's conflict target.
    uniqueIndex("webhook_deliveries_app_key_uq").on(t.appPk, t.idemKey),
    // Recent deliveries per app, newest first (dashboard).
    index("webhook_deliveries_app_received_idx").on(t.appPk, t.receivedMs),
    // One call's deliveries, for its event log (migration 0018; chat deliveries have no session).
    index("webhook_deliveries_app_session_idx").on(t.appPk, t.sessionId).where(sql`session_id IS NOT NULL`),
  ],
);

/** A refused delivery: why, never its body or credentials. Only for registered apps. */
export const webhookRejections = sqliteTable(
  "webhook_rejections",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    status: integer("status").notNull(),
    code: text("code").notNull(),
    reason: text("reason").notNull(),
    /** The envelope's trigger, when the body got that far. */
    trigger: text("trigger"),
    receivedMs: integer("received_ms").notNull(),
  },
  (t) => [
    // Recent rejections per app (dashboard) and the per-app pruning.
    index("webhook_rejections_app_received_idx").on(t.appPk, t.receivedMs),
  ],
);

/**
 * A call or meeting as the live webhooks describe it. An estimate: the sync's record in
 * `calls` is the truth once it exists (lib/ingest/queries.ts prefers it).
 * Times are epoch seconds.
 */
export const liveSessions = sqliteTable(
  "live_sessions",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    /** `call` or `meet`. */
    kind: text("kind", { enum: ["call", "meet"] }).notNull(),
    /** Only moves forward: initiated → ongoing → ended, whatever the arrival order. */
    status: text("status", { enum: ["initiated", "ongoing", "ended"] }).notNull(),
    initiator: text("initiator"),
    receiver: text("receiver"),
    receiverType: text("receiver_type"),
    initiatedAt: integer("initiated_at"),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    lastEventMs: integer("last_event_ms").notNull(),
  },
  (t) => [
    // Upsert key of every live trigger.
    uniqueIndex("live_sessions_app_session_uq").on(t.appPk, t.sessionId),
    // "Going on now" per app, and pruning of old ended sessions.
    index("live_sessions_app_status_idx").on(t.appPk, t.status, t.lastEventMs),
  ],
);

/**
 * Who is (or was) in a live session. Occupants carry a display name, no uid, so one
 * stay is (name, joined_at); a rejoin is a second row. `joined_at` 0 = not reported.
 */
export const liveOccupants = sqliteTable(
  "live_occupants",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    sessionPk: integer("session_pk")
      .notNull()
      .references(() => liveSessions.pk, { onDelete: "cascade" }),
    name: text("name").notNull(),
    joinedAt: integer("joined_at").notNull(),
    leftAt: integer("left_at"),
    audioOnly: integer("audio_only", { mode: "boolean" }),
  },
  (t) => [
    // Upsert key of joined / left / ended occupants; also lists a session's occupants.
    uniqueIndex("live_occupants_session_stay_uq").on(t.sessionPk, t.name, t.joinedAt),
  ],
);

/**
 * Deliveries counted once per app, trigger and 15-minute bucket of the event's time
 * (every time zone's offset is a multiple of 15 minutes, so days in any `tz` are exact).
 */
export const eventCounts = sqliteTable(
  "event_counts",
  {
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    trigger: text("trigger").notNull(),
    /** Bucket start, epoch seconds, a multiple of 900. */
    bucketStart: integer("bucket_start").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [
    // Upsert key; also serves "counts per app over a time range" (app_pk first, then range on bucket).
    primaryKey({ columns: [t.appPk, t.bucketStart, t.trigger] }),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookRejectionRow = typeof webhookRejections.$inferSelect;
export type LiveSessionRow = typeof liveSessions.$inferSelect;
export type LiveOccupantRow = typeof liveOccupants.$inferSelect;
export type EventCountRow = typeof eventCounts.$inferSelect;
