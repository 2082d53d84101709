import { integer, sqliteTable } from "drizzle-orm/sqlite-core";

/**
 * The change log every process's in-memory analytics store (lib/analytics/engines/memory/store/store.ts)
 * catches up from: one row per write to `calls` or `call_participants`, appended by
 * cheap SQLite triggers (migration `analytics_changes`), so whoever writes — the sync,
 * the webhook ingest, a script, another process — every reader sees it. Two writes
 * are not logged by a trigger: a new call (readers find it by pk) and a participant
 * insert, whose writer logs the call itself unless it inserted the call in the same
 * transaction (`LOG_CALL_CHANGE`, lib/sync/writer.ts; migration 0020, decision 0025).
 * Bounded: a trigger prunes all but the newest ~1M rows; a reader that fell further
 * behind reloads in full. See docs/decisions/0006-analytics-rollups.md.
 */
export const analyticsChanges = sqliteTable("analytics_changes", {
  /** Rowid: the order of changes (readers remember the last one they applied). */
  seq: integer("seq").primaryKey(),
  /** The call whose row or participant rows changed (deleted calls included). */
  callPk: integer("call_pk").notNull(),
});
