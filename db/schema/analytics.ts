import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Rollups of `calls` and `call_participants` that every analytics report reads
 * (lib/analytics). They are kept exact by SQLite triggers on the fact tables (migration
 * `analytics_triggers`), so whoever writes — the sync, the webhook ingest, a script —
 * the rollups follow in the same transaction. See docs/decisions/0006-analytics-rollups.md.
 *
 * `dims` packs the call's categorical columns into one small integer (lib/analytics/dims.ts):
 *   type (audio 0, video 1, other 2)
 *   + 3 × mode (call 0, meet 1, presenter 2, other 3)
 *   + 12 × status (ended 0, ongoing 1, rejected 2, unanswered 3, other 4)
 *   + 60 × receiverType (user 0, group 1, other 2)
 *   + 180 × hasRecording (0/1)
 * Every table is WITHOUT ROWID (edited into the generated migration): rows are stored in
 * key order, so a time-ranged report reads one contiguous stretch of the table.
 */

/** Per app × UTC 15-minute bucket: serves per-day reports in any zone (every IANA offset
 * is a multiple of 15 minutes) and the weekday × hour concurrency heatmap. */
export const analyticsCallQ15 = sqliteTable(
  "analytics_call_q15",
  {
    appPk: integer("app_pk").notNull(),
    /** floor(start_at / 900). */
    bucket: integer("bucket").notNull(),
    dims: integer("dims").notNull(),
    /** total_participants (so the participantsCount filter is served too). */
    pc: integer("pc").notNull(),
    calls: integer("calls").notNull().default(0),
    audio: real("audio").notNull().default(0),
    video: real("video").notNull().default(0),
    totalMin: real("total_min").notNull().default(0),
    durS: integer("dur_s").notNull().default(0),
    parts: integer("parts").notNull().default(0),
    /** Calls that started before this bucket's first instant and end after it: with the
     * starts, they give "calls overlapping an hour" for any hour aligned to 15 minutes. */
    crossing: integer("crossing").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appPk, t.bucket, t.dims, t.pc] })],
);

/** Per app × UTC day: totals, breakdowns, per-app usage and the duration distribution
 * over whole days (partial days at the edges of a range are read from `calls`). */
export const analyticsCallDay = sqliteTable(
  "analytics_call_day",
  {
    appPk: integer("app_pk").notNull(),
    /** floor(start_at / 86400). */
    day: integer("day").notNull(),
    dims: integer("dims").notNull(),
    pc: integer("pc").notNull(),
    /** Duration bucket 0..5: <1m, 1–5m, 5–15m, 15–30m, 30–60m, ≥60m. */
    durBucket: integer("dur_bucket").notNull(),
    calls: integer("calls").notNull().default(0),
    audio: real("audio").notNull().default(0),
    video: real("video").notNull().default(0),
    totalMin: real("total_min").notNull().default(0),
    durS: integer("dur_s").notNull().default(0),
    parts: integer("parts").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appPk, t.day, t.dims, t.pc, t.durBucket] })],
);

const participantColumns = {
  appPk: integer("app_pk").notNull(),
  uid: text("uid").notNull(),
  dims: integer("dims").notNull(),
  /** Distinct calls the uid is listed in (a uid can have two rows in one call). */
  listed: integer("listed").notNull().default(0),
  /** Distinct calls with at least one joined row of the uid. */
  joined: integer("joined").notNull().default(0),
  /** Distinct calls with a row of the uid in state `unanswered`. */
  unanswered: integer("unanswered").notNull().default(0),
  audio: real("audio").notNull().default(0),
  video: real("video").notNull().default(0),
  totalMin: real("total_min").notNull().default(0),
  /** Earliest / latest call start in the cell (recomputed when that call leaves the cell). */
  firstStart: integer("first_start"),
  lastStart: integer("last_start"),
};

/** Per app × UTC day × uid: the edges of a range in the per-participant report. */
export const analyticsParticipantDay = sqliteTable(
  "analytics_participant_day",
  { ...participantColumns, day: integer("day").notNull() },
  (t) => [primaryKey({ columns: [t.appPk, t.day, t.uid, t.dims] })],
);

/** Per app × UTC calendar month (yyyymm) × uid: the bulk of a per-participant report. */
export const analyticsParticipantMonth = sqliteTable(
  "analytics_participant_month",
  { ...participantColumns, month: integer("month").notNull() },
  (t) => [primaryKey({ columns: [t.appPk, t.month, t.uid, t.dims] })],
);

/** 0..N: lets a trigger add one row per 15-minute boundary a long call crosses. */
export const analyticsNumbers = sqliteTable("analytics_numbers", {
  n: integer("n").primaryKey(),
});
