import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/** One sync of one app: what it did and how it ended. */
export const syncRuns = sqliteTable(
  "sync_runs",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["full", "incremental"] }).notNull(),
    trigger: text("trigger", { enum: ["schedule", "cli", "manual", "demo", "test"] }).notNull(),
    status: text("status", { enum: ["running", "succeeded", "failed"] }).notNull(),
    startedMs: integer("started_ms").notNull(),
    finishedMs: integer("finished_ms"),
    pages: integer("pages").notNull().default(0),
    fetched: integer("fetched").notNull().default(0),
    inserted: integer("inserted").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    unchanged: integer("unchanged").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    /** Ongoing calls re-fetched one by one. */
    refreshed: integer("refreshed").notNull().default(0),
    error: text("error"),
    /** The first skipped records with their reasons: [{sessionId?, reason}]. */
    skippedRecords: text("skipped_records", { mode: "json" }).$type<Array<{ sessionId: string | null; reason: string }>>(),
    // Resuming a failed backfill (migration 0010, docs/decisions/0008).
    /** The page size the run asked for (its page numbers mean nothing without it). */
    perPage: integer("per_page"),
    /** Where the run's first pass began: 1, or the page after the run it resumed. */
    startPage: integer("start_page").notNull().default(1),
    /**
     * The page through which everything the first pass fetched is committed; null while
     * the pages have not proven newest first (such a run is not resumed by page).
     */
    committedPage: integer("committed_page"),
    /** The failed run this one continued. */
    resumedFromRun: integer("resumed_from_run"),
    /** The total the platform announced on the run's first page. */
    announcedTotal: integer("announced_total"),
  },
  (t) => [
    // Sync page and health: latest runs per app.
    index("sync_runs_app_started_idx").on(t.appPk, t.startedMs),
  ],
);

/**
 * At most one sync per app at a time, across processes: a row is the lock, with a
 * lease that the holder renews; a holder killed by SIGKILL stops renewing and its
 * lease runs out.
 */
export const syncLocks = sqliteTable("sync_locks", {
  appPk: integer("app_pk")
    .primaryKey()
    .references(() => apps.pk, { onDelete: "cascade" }),
  owner: text("owner").notNull(),
  acquiredMs: integer("acquired_ms").notNull(),
  expiresMs: integer("expires_ms").notNull(),
});

export type SyncRunRow = typeof syncRuns.$inferSelect;
