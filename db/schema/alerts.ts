import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./auth";

/**
 * Alerts (lib/alerts): rules evaluated once per window, their transitions, and the
 * durable outbox of their webhook notifications. The JSON columns are validated by
 * lib/alerts/schema.ts on every read; the destination URL and its signing secret are
 * encrypted at rest (lib/crypto/secrets.ts) — a chat webhook's URL is a credential.
 */
export const alertRules = sqliteTable("alert_rules", {
  pk: integer("pk").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  /** One of lib/alerts/schema.ts METRICS. */
  metric: text("metric").notNull(),
  /** The filter model without time (app, type, mode, …): JSON. */
  filters: text("filters", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  windowSeconds: integer("window_seconds").notNull(),
  /** `{op: "above"|"below", value}` or `{op: "change", percent, direction}`: JSON. */
  condition: text("condition", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  minCalls: integer("min_calls").notNull().default(0),
  destinationUrlEnc: text("destination_url_enc"),
  /** `whsec_…`, the Standard Webhooks signing secret of the destination. */
  destinationSecretEnc: text("destination_secret_enc"),
  /** The admin allowed a loopback / private / link-local destination for this rule. */
  destinationAllowPrivate: integer("destination_allow_private", { mode: "boolean" }).notNull().default(false),
  state: text("state", { enum: ["ok", "firing", "resolved"] }).notNull().default("ok"),
  stateSinceMs: integer("state_since_ms").notNull(),
  /** End (epoch seconds, exclusive) of the last window evaluated: each window once, across restarts. */
  lastWindowTo: integer("last_window_to"),
  lastEvaluatedMs: integer("last_evaluated_ms"),
  lastValue: real("last_value"),
  lastPreviousValue: real("last_previous_value"),
  lastCalls: integer("last_calls"),
  /** Why the last evaluation had no verdict (too few calls, a failed report). */
  lastNote: text("last_note"),
  /** Bumped by every edit: an evaluation computed for an older version is not recorded. */
  version: integer("version").notNull().default(1),
  createdByPk: integer("created_by_pk").references(() => users.pk, { onDelete: "set null" }),
  createdMs: integer("created_ms").notNull(),
  updatedMs: integer("updated_ms").notNull(),
});

/** One state change of a rule, with the values that caused it. */
export const alertEvents = sqliteTable(
  "alert_events",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    rulePk: integer("rule_pk")
      .notNull()
      .references(() => alertRules.pk, { onDelete: "cascade" }),
    /** `evt_<rule>_<windowTo>_<state>`: a rule changes state at most once per window. */
    eventId: text("event_id").notNull(),
    fromState: text("from_state", { enum: ["ok", "firing", "resolved"] }).notNull(),
    toState: text("to_state", { enum: ["ok", "firing", "resolved"] }).notNull(),
    atMs: integer("at_ms").notNull(),
    windowFrom: integer("window_from").notNull(),
    windowTo: integer("window_to").notNull(),
    value: real("value").notNull(),
    previousValue: real("previous_value"),
    /** The threshold compared with: the value (above/below) or the percentage (change). */
    threshold: real("threshold").notNull(),
    calls: integer("calls").notNull(),
  },
  (t) => [
    uniqueIndex("alert_events_event_id_uq").on(t.eventId),
    // A rule's history, newest first.
    index("alert_events_rule_idx").on(t.rulePk, t.pk),
  ],
);

/**
 * Webhook notifications waiting to be delivered, delivered, or given up (after a day).
 * A row is written in the same transaction as the transition it announces, so a crash
 * can neither lose nor double it; the event id (unique) is the receiver's dedupe key.
 */
export const alertOutbox = sqliteTable(
  "alert_outbox",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    rulePk: integer("rule_pk")
      .notNull()
      .references(() => alertRules.pk, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    /** The exact JSON body that is signed and sent on every attempt. */
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    createdMs: integer("created_ms").notNull(),
    /** Next attempt (pending), or until when an attempt in flight holds the row. */
    nextAttemptMs: integer("next_attempt_ms").notNull(),
    lastAttemptMs: integer("last_attempt_ms"),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    deliveredMs: integer("delivered_ms"),
  },
  (t) => [
    // Deduplication by event id: the enqueue is INSERT … ON CONFLICT DO NOTHING.
    uniqueIndex("alert_outbox_event_id_uq").on(t.eventId),
    // The dispatcher's "pending and due" scan.
    index("alert_outbox_due_idx").on(t.status, t.nextAttemptMs),
  ],
);

export type AlertRuleRow = typeof alertRules.$inferSelect;
export type AlertEventRow = typeof alertEvents.$inferSelect;
export type AlertOutboxRow = typeof alertOutbox.$inferSelect;
