import { integer, sqliteTable } from "drizzle-orm/sqlite-core";

/**
 * The change log every process's in-memory analytics store (lib/analytics/store.ts)
 * catches up from: one row per write to `calls` or `call_participants`, appended by
 * cheap SQLite triggers (migration `analytics_changes`), so whoever writes — the sync,
 * the webhook ingest, a script, another process — every reader sees it. Bounded: a
 * trigger prunes all but the newest ~1M rows; a reader that fell further behind
 * reloads in full. See docs/decisions/0006-analytics-rollups.md.
 */
export const analyticsChanges = sqliteTable("analytics_changes", {
  /** Rowid: the order of changes (readers remember the last one they applied). */
  seq: integer("seq").primaryKey(),
  /** The call whose row or participant rows changed (deleted calls included). */
  callPk: integer("call_pk").notNull(),
});
