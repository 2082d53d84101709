import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/**
 * What each participant session joined with, kept at ingest from the join webhooks
 * (lib/ingest/client-sessions.ts; docs/decisions/0017-client-sessions.md): the clients
 * report reads it, for as far back as joins were ever stored (the raw deliveries are
 * pruned, these rows are not). One row per (app, session, occupant, joined_at).
 */
export const clientSessions = sqliteTable(
  "client_sessions",
  {
    pk: integer("pk").primaryKey({ autoIncrement: true }),
    appPk: integer("app_pk")
      .notNull()
      .references(() => apps.pk, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    /** The occupant's name: the webhooks' only identity of a participant ('' when not given). */
    occupant: text("occupant").notNull(),
    /** occupant.joined_at, epoch seconds (null: the join did not say). */
    joinedAt: integer("joined_at"),
    /** joined_at, else the second the join was received: what the period filters. */
    countedAt: integer("counted_at").notNull(),
    /** When a leave (or the call's end) said the occupant left. */
    leftAt: integer("left_at"),
    /** call_participant_joined or meeting_participant_joined. */
    trigger: text("trigger").notNull(),
    /** initial_config text fields, trimmed and lower case (numbers as text); null: not said. */
    platform: text("platform"),
    sdk: text("sdk"),
    callVersion: text("call_version"),
    /** Flags 1/0 (null: missing or not a true/false value). */
    isAudioOnly: integer("is_audio_only"),
    /** The occupant's audio_call: what counts as audio only when initial_config does not say. */
    audioCall: integer("audio_call"),
    isVideoMuted: integer("is_video_muted"),
    startRecordingOnCallStart: integer("start_recording_on_call_start"),
    receivedMs: integer("received_ms").notNull(),
    /** Change stamp, unique and growing: every insert and update takes the next one (ClickHouse forwarding and copy follow it). */
    seq: integer("seq").notNull(),
  },
  (t) => [
    // Idempotency (a repeated join changes nothing) and a leave's lookup of its stay.
    uniqueIndex("client_sessions_stay_uq").on(t.appPk, t.sessionId, t.occupant, sql`ifnull(${t.joinedAt}, -1)`),
    // The clients report: an app's sessions in a period.
    index("client_sessions_app_counted_idx").on(t.appPk, t.countedAt),
    // The next change stamp (max) and the forwarder's "changed since" reads.
    uniqueIndex("client_sessions_seq_uq").on(t.seq),
  ],
);

/** One-off fills of new tables from deliveries stored before them (db/backfills.ts). */
export const warehouseBackfills = sqliteTable("warehouse_backfills", {
  name: text("name").primaryKey(),
  /** Deliveries up to this pk are done… */
  afterPk: integer("after_pk").notNull().default(0),
  /** …of those stored before the table existed. */
  uptoPk: integer("upto_pk").notNull(),
});

export type ClientSessionRow = typeof clientSessions.$inferSelect;
