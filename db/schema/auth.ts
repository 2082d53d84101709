import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/**
 * People who sign in. `email` is stored lower-cased (it is the sign-in name).
 * `session_epoch` is copied into every session JWT; bumping it (password change,
 * disable) ends every session issued before, although the JWT itself is stateless.
 */
export const users = sqliteTable("users", {
  pk: integer("pk").primaryKey({ autoIncrement: true }),
  email: text("email").notNull().unique(),
  /** argon2id PHC string. */
  passwordHash: text("password_hash").notNull(),
  role: text("role", { enum: ["admin", "viewer"] }).notNull(),
  disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
  sessionEpoch: integer("session_epoch").notNull().default(0),
  createdMs: integer("created_ms").notNull(),
  updatedMs: integer("updated_ms").notNull(),
});

/** The apps a viewer may see (admins see every app; their grants are ignored). */
export const userAppGrants = sqliteTable(
  "user_app_grants",
  {
    userPk: integer("user_pk")
      .notNull()
      .references(() => users.pk, { onDelete: "cascade" }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.userPk, t.appPk] })],
);

/**
 * API tokens for scripts. Only the SHA-256 of the token is stored; `prefix` (the first
 * characters after `cb_`) lets a person recognise a token in a list.
 */
export const apiTokens = sqliteTable(
  "api_tokens",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    userPk: integer("user_pk")
      .notNull()
      .references(() => users.pk, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    createdMs: integer("created_ms").notNull(),
    lastUsedMs: integer("last_used_ms"),
    revoked: integer("revoked", { mode: "boolean" }).notNull().default(false),
    revokedMs: integer("revoked_ms"),
    /** `full`: the user's rights; `read`: reports, CSV and statements only, no writes (tokens made before scopes are `full`). */
    scope: text("scope", { enum: ["full", "read"] }).notNull().default("full"),
    /** Refused from this instant on; null: never expires. */
    expiresMs: integer("expires_ms"),
  },
  (t) => [
    // Token lists per user (settings page, `tokens list --email`).
    index("api_tokens_user_idx").on(t.userPk),
  ],
);

/**
 * Who did what, when. The actor's email is copied so that the row still reads
 * correctly after the user is removed. `details` never holds a secret.
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    atMs: integer("at_ms").notNull(),
    actorUserPk: integer("actor_user_pk"),
    actorEmail: text("actor_email").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [
    // The audit page: newest first.
    index("audit_log_at_idx").on(t.atMs),
  ],
);

/**
 * Failed sign-in attempts, one row each, keyed `account:<email>` or `address:<ip>`.
 * Kept in the warehouse so the throttle survives restarts; rows older than the
 * window are pruned.
 */
export const signinFailures = sqliteTable(
  "signin_failures",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    key: text("key").notNull(),
    atMs: integer("at_ms").notNull(),
  },
  (t) => [
    // "Failures of this key in the window" and the prune of old rows.
    index("signin_failures_key_at_idx").on(t.key, t.atMs),
    index("signin_failures_at_idx").on(t.atMs),
  ],
);

export type UserRow = typeof users.$inferSelect;
export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type AuditRow = typeof auditLog.$inferSelect;

/**
 * Sessions ended by signing out. A JWT session is stateless and renewed on use: a
 * request still in flight when the user signs out (a link prefetch, a refetch) can
 * bring back a renewed cookie. Its `sid` stays the same across renewals, so listing
 * it here ends it for good. Rows older than the session lifetime are pruned.
 */
export const endedSessions = sqliteTable(
  "ended_sessions",
  {
    sid: text("sid").primaryKey(),
    endedMs: integer("ended_ms").notNull(),
  },
  (t) => [
    // Pruning by age.
    index("ended_sessions_ended_idx").on(t.endedMs),
  ],
);

/**
 * A person's own defaults for the report pages (issue 29): the zone a page starts in and
 * the apps it starts with when its URL names none. One row per user, made on first save.
 */
export const userPreferences = sqliteTable("user_preferences", {
  userPk: integer("user_pk")
    .primaryKey()
    .references(() => users.pk, { onDelete: "cascade" }),
  /** IANA zone; null: the browser's. */
  timeZone: text("time_zone"),
  /** Platform app ids, JSON array; empty: every app the person may see. */
  apps: text("apps", { mode: "json" }).$type<string[]>().notNull().default([]),
  updatedMs: integer("updated_ms").notNull(),
});

/**
 * Saved views (issue 29): a named filter set of one report page, kept per person, and
 * offered to every user of the account when shared. `query` holds only the filter names
 * of docs/api.md (lib/ui/carry.ts), never paging.
 */
export const savedViews = sqliteTable(
  "saved_views",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    ownerUserPk: integer("owner_user_pk")
      .notNull()
      .references(() => users.pk, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The report page's path ("/calls"). */
    path: text("path").notNull(),
    query: text("query").notNull(),
    shared: integer("shared", { mode: "boolean" }).notNull().default(false),
    createdMs: integer("created_ms").notNull(),
  },
  // The views list: a person's own, then the shared ones.
  (t) => [index("saved_views_owner_idx").on(t.ownerUserPk), index("saved_views_shared_idx").on(t.shared)],
);
