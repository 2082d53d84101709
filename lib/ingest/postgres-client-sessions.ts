import type pg from "pg";
import type { ClientSessionSqliteRow } from "@/lib/clickhouse/rows";
import type { ClientSessionChange } from "@/lib/platform/client-session-facts";

/**
 * The Postgres side of client sessions (table `client_sessions`,
 * docs/decisions/0017-client-sessions.md), for the webhook inbox shared by several servers
 * (postgres-inbox.ts): the statements of lib/ingest/client-sessions.ts, with one
 * difference. SQLite stamps each change with `max(seq) + 1` (one writer at a time); two
 * servers doing that at once would take the same stamp and break the unique index, so here
 * each insert and update takes the next value of the `client_sessions_seq_stamp` sequence
 * (db/postgres/schema.ts). Stamps therefore grow in the order rows were changed, which is
 * what ClickHouse's version needs; the forwarder does not follow them as a cursor (a
 * smaller stamp may commit later), it sends the rows of the sessions each forwarded batch
 * touched (`clientSessionsOfSessions`).
 */

type Queryable = Pick<pg.Pool, "query">;

const NEXT_SEQ = "nextval('client_sessions_seq_stamp')";

// A leave that came first (out of order) is already in the live state: its time is taken from there.
const JOIN = `INSERT INTO client_sessions (app_pk, session_id, occupant, joined_at, counted_at, left_at, trigger, platform, sdk, call_version,
    is_audio_only, audio_call, is_video_muted, start_recording_on_call_start, received_ms, seq)
  VALUES ($1, $2, $3, $4, $5,
    (SELECT o.left_at FROM live_sessions s JOIN live_occupants o ON o.session_pk = s.pk
      WHERE $15::boolean AND s.app_pk = $1 AND s.session_id = $2 AND o.name = $3 AND o.joined_at = coalesce($4::bigint, 0)),
    $6, $7, $8, $9, $10, $11, $12, $13, $14, ${NEXT_SEQ})
  ON CONFLICT DO NOTHING`;

// Repeated or conflicting leaves: the latest time wins (the same row whatever their order).
const LEAVE = `UPDATE client_sessions SET left_at = $5, seq = ${NEXT_SEQ}
  WHERE app_pk = $1 AND session_id = $2 AND occupant = $3 AND coalesce(joined_at, -1) = $4
    AND (left_at IS NULL OR (NOT $6::boolean AND left_at < $5))`;

// A leave that lost its joined_at closes the occupant's latest open stay.
const LEAVE_LATEST = `UPDATE client_sessions SET left_at = $4, seq = ${NEXT_SEQ}
  WHERE pk = (SELECT pk FROM client_sessions WHERE app_pk = $1 AND session_id = $2 AND occupant = $3 AND left_at IS NULL
    ORDER BY coalesce(joined_at, -1) DESC LIMIT 1)`;

/** Applies one change (a join's client, a leave's time) in Postgres, as applyClientSessionChange does in SQLite. */
export async function applyClientSessionChangePg(db: Queryable, change: ClientSessionChange, leftFromLive = true): Promise<void> {
  if (change.kind === "join") {
    const f = change.facts;
    await db.query(JOIN, [
      f.appPk, f.sessionId, f.occupant, f.joinedAt, f.countedAt, f.trigger, f.platform, f.sdk, f.callVersion,
      f.isAudioOnly, f.audioCall, f.isVideoMuted, f.startRecordingOnCallStart, f.receivedMs, leftFromLive,
    ]);
    return;
  }
  for (const s of change.stays) {
    if (s.joinedAt === null) await db.query(LEAVE_LATEST, [change.appPk, change.sessionId, s.occupant, s.leftAt]);
    else await db.query(LEAVE, [change.appPk, change.sessionId, s.occupant, s.joinedAt, s.leftAt, s.ifOpen]);
  }
}

interface ClientSessionPgRow {
  app_pk: string; session_id: string; occupant: string; joined_at: string | null; counted_at: string; left_at: string | null; trigger: string;
  platform: string | null; sdk: string | null; call_version: string | null; is_audio_only: string | null; audio_call: string | null;
  is_video_muted: string | null; start_recording_on_call_start: string | null; received_ms: string; seq: string;
}

const num = (v: string | null) => (v === null ? null : Number(v));

/**
 * Every `client_sessions` row of these (app, session) pairs, as SQLite's rows read (numbers,
 * not pg's bigint strings): what the forwarder sends for a batch whose deliveries joined or
 * left them. Their current state, stamp and all: a later change has a later delivery, which
 * is forwarded after it commits and sends the row again with its higher stamp.
 */
export async function clientSessionsOfSessions(db: Queryable, sessions: ReadonlyArray<{ appPk: number; sessionId: string }>): Promise<ClientSessionSqliteRow[]> {
  if (sessions.length === 0) return [];
  const { rows } = await db.query<ClientSessionPgRow>(
    `SELECT c.app_pk, c.session_id, c.occupant, c.joined_at, c.counted_at, c.left_at, c.trigger, c.platform, c.sdk, c.call_version,
            c.is_audio_only, c.audio_call, c.is_video_muted, c.start_recording_on_call_start, c.received_ms, c.seq
     FROM client_sessions c JOIN unnest($1::bigint[], $2::text[]) AS t(app_pk, session_id) ON c.app_pk = t.app_pk AND c.session_id = t.session_id
     ORDER BY c.seq`,
    [sessions.map((s) => s.appPk), sessions.map((s) => s.sessionId)],
  );
  return rows.map((r) => ({
    app_pk: Number(r.app_pk), session_id: r.session_id, occupant: r.occupant, joined_at: num(r.joined_at), counted_at: Number(r.counted_at),
    left_at: num(r.left_at), trigger: r.trigger, platform: r.platform, sdk: r.sdk, call_version: r.call_version,
    is_audio_only: num(r.is_audio_only), audio_call: num(r.audio_call), is_video_muted: num(r.is_video_muted),
    start_recording_on_call_start: num(r.start_recording_on_call_start), received_ms: Number(r.received_ms), seq: Number(r.seq),
  }));
}
