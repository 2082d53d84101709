import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { apps } from "./apps";

/**
 * One call session as the platform's Calls API last reported it (source `sync`), or as
 * estimated from live webhooks until the sync brings the authoritative record
 * (source `webhook`). Typed columns serve the queries; `raw` keeps the record exactly
 * as received so fields the platform adds later are never lost.
 */
export const calls = sqliteTable(
  "calls",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    mid: text("mid"),
    type: text("type"),
    mode: text("mode"),
    status: text("status"),
    initiator: text("initiator"),
    receiver: text("receiver"),
    receiverType: text("receiver_type"),
    initiatedAt: integer("initiated_at"),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    /** The call's start for every time filter: startedAt, or initiatedAt for calls never started. */
    startAt: integer("start_at").notNull(),
    /** The platform's own flag. */
    platformHasRecording: integer("platform_has_recording", { mode: "boolean" }).notNull().default(false),
    /** Platform flag OR a recording_generated webhook for this session: what filters use. */
    hasRecording: integer("has_recording", { mode: "boolean" }).notNull().default(false),
    totalAudioMinutes: real("total_audio_minutes").notNull().default(0),
    totalVideoMinutes: real("total_video_minutes").notNull().default(0),
    totalDurationMinutes: real("total_duration_minutes").notNull().default(0),
    /** `totalDuration` (HH:MM:SS) parsed to seconds. */
    durationSeconds: integer("duration_seconds").notNull().default(0),
    totalParticipants: integer("total_participants").notNull().default(0),
    source: text("source", { enum: ["sync", "webhook"] }).notNull().default("sync"),
    /** Hash of the raw record: lets a sync tell "unchanged" without comparing columns. */
    contentHash: text("content_hash"),
    raw: text("raw", { mode: "json" }).$type<Record<string, unknown>>(),
    firstSeenMs: integer("first_seen_ms").notNull(),
    updatedMs: integer("updated_ms").notNull(),
  },
  (t) => [
    // Upsert key of the sync and of webhook recordings.
    uniqueIndex("calls_app_session_uq").on(t.appPk, t.sessionId),
    // The sync's "refresh calls still ongoing" pass: a partial index stays tiny and costs
    // nothing on the writes of ended calls. Reports filter and sort in the in-memory
    // analytics store, not with indexes on calls (docs/decisions/0007).
    index("calls_app_ongoing_idx").on(t.appPk).where(sql`status = 'ongoing'`),
    // Calls the platform flags as recorded: the recordings summary and the calls still
    // awaiting their link (lib/analytics/engines/memory/reports/recording-status.ts). Partial, and covering for the counts.
    index("calls_platform_recording_idx").on(t.appPk, t.startAt, t.sessionId).where(sql`platform_has_recording = 1`),
    // The calls CSV's columns the analytics store does not hold, read by pk
    // (reports/calls-csv-reader.ts): a narrow copy, not the wide rows (docs/decisions/0028).
    index("calls_csv_text_idx").on(t.pk, t.sessionId, t.initiator, t.receiver, t.initiatedAt, t.startedAt, t.endedAt, t.totalDurationMinutes),
  ],
);

/**
 * Participant rows of a call. `seq` is the row's position in the platform's list:
 * the same uid can appear twice in one call (rejoin, second device), so the key is
 * (call, seq), never (call, uid).
 *
 * The table is WITHOUT ROWID (set by hand in migration 0008: drizzle cannot declare it):
 * one B-tree clustered by call instead of a rowid tree plus a unique index, which halves
 * the index work per participant row on a backfill and keeps a call's rows together.
 */
export const callParticipants = sqliteTable(
  "call_participants",
  {
    callPk: integer("call_pk")
      .notNull()
      .references(() => calls.pk, { onDelete: "cascade" }),
    appPk: integer("app_pk").notNull(),
    seq: integer("seq").notNull(),
    uid: text("uid").notNull(),
    state: text("state"),
    isJoined: integer("is_joined", { mode: "boolean" }).notNull().default(false),
    totalAudioMinutes: real("total_audio_minutes").notNull().default(0),
    totalVideoMinutes: real("total_video_minutes").notNull().default(0),
    totalDurationMinutes: real("total_duration_minutes").notNull().default(0),
    deviceId: text("device_id"),
    joinedAt: integer("joined_at"),
    leftAt: integer("left_at"),
    mid: text("mid"),
    raw: text("raw", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [primaryKey({ name: "call_participants_pk", columns: [t.callPk, t.seq] })],
);

/** A recording, from a `recording_generated` webhook (keyed so repeats collapse). */
export const recordings = sqliteTable(
  "recordings",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    /** Joined to calls by (app, session) — the call may not be synced yet. */
    sessionId: text("session_id").notNull(),
    recordingUrl: text("recording_url").notNull(),
    recordingDate: text("recording_date"),
    /** `duration` as sent (string decimal), parsed. */
    duration: real("duration"),
    /** `startTime` (epoch seconds). */
    startTime: integer("start_time"),
    receivedMs: integer("received_ms").notNull(),
  },
  (t) => [
    uniqueIndex("recordings_app_session_start_uq").on(t.appPk, t.sessionId, t.startTime),
    // "Recordings, newest first".
    index("recordings_app_received_idx").on(t.appPk, t.receivedMs),
  ],
);

export type CallRow = typeof calls.$inferSelect;
export type NewCallRow = typeof calls.$inferInsert;
export type CallParticipantRow = typeof callParticipants.$inferSelect;
export type NewCallParticipantRow = typeof callParticipants.$inferInsert;
export type RecordingRow = typeof recordings.$inferSelect;
