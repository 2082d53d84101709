import type Database from "better-sqlite3";
import type { ClientSessionChange } from "@/lib/platform/client-session-facts";

/**
 * The SQLite side of client sessions (table `client_sessions`,
 * docs/decisions/0017-client-sessions.md): the statements that keep what a join says, and
 * a leave's time (what the webhooks say: lib/platform/client-session-facts.ts).
 */

/** The next change stamp: every insert and update takes one (the forwarder and the copy follow it). */
const NEXT_SEQ = "(SELECT coalesce(max(seq), 0) + 1 FROM client_sessions)";

export function prepareClientSessionStatements(sqlite: Database.Database) {
  return {
    // A leave that came first (out of order) is already in the live state: its time is taken
    // from there (not by the fill of old joins, which applies every leave after every join).
    join: sqlite.prepare<Record<string, string | number | null>>(
      `INSERT INTO client_sessions (app_pk, session_id, occupant, joined_at, counted_at, left_at, trigger, platform, sdk, call_version,
         is_audio_only, audio_call, is_video_muted, start_recording_on_call_start, received_ms, seq)
       VALUES (@appPk, @sessionId, @occupant, @joinedAt, @countedAt,
         (SELECT o.left_at FROM live_sessions s JOIN live_occupants o ON o.session_pk = s.pk
           WHERE @leftFromLive = 1 AND s.app_pk = @appPk AND s.session_id = @sessionId AND o.name = @occupant AND o.joined_at = coalesce(@joinedAt, 0)),
         @trigger, @platform, @sdk, @callVersion, @isAudioOnly, @audioCall, @isVideoMuted, @startRecordingOnCallStart, @receivedMs, ${NEXT_SEQ})
       ON CONFLICT DO NOTHING`,
    ),
    leave: sqlite.prepare<Record<string, string | number | null>>(
      // Repeated or conflicting leaves: the latest time wins (the same row whatever their order).
      `UPDATE client_sessions SET left_at = @leftAt, seq = ${NEXT_SEQ}
       WHERE app_pk = @appPk AND session_id = @sessionId AND occupant = @occupant AND ifnull(joined_at, -1) = @joinedKey
         AND (left_at IS NULL OR (@ifOpen = 0 AND left_at < @leftAt))`,
    ),
    // A leave that lost its joined_at closes the occupant's latest open stay.
    leaveLatest: sqlite.prepare<Record<string, string | number | null>>(
      `UPDATE client_sessions SET left_at = @leftAt, seq = ${NEXT_SEQ}
       WHERE pk = (SELECT pk FROM client_sessions WHERE app_pk = @appPk AND session_id = @sessionId AND occupant = @occupant AND left_at IS NULL
         ORDER BY ifnull(joined_at, -1) DESC LIMIT 1)`,
    ),
  };
}
export type ClientSessionStatements = ReturnType<typeof prepareClientSessionStatements>;

/** Applies one change; `leftFromLive`: a join takes a leave that came first from the live state (the ingest). */
export function applyClientSessionChange(st: ClientSessionStatements, change: ClientSessionChange, leftFromLive = true): void {
  if (change.kind === "join") {
    st.join.run({ ...change.facts, leftFromLive: leftFromLive ? 1 : 0 });
    return;
  }
  for (const s of change.stays) {
    const key = { appPk: change.appPk, sessionId: change.sessionId, occupant: s.occupant, leftAt: s.leftAt };
    if (s.joinedAt === null) st.leaveLatest.run(key);
    else st.leave.run({ ...key, joinedKey: s.joinedAt, ifOpen: s.ifOpen ? 1 : 0 });
  }
}
