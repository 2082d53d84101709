import type Database from "better-sqlite3";
import type { ClientSessionChange } from "@/lib/platform/client-session-facts";
import { prepareClientSessionStatements } from "./client-sessions";
import type { LiveEvent, RecordingEvent } from "../platform/webhook-envelope";

export type Effect =
  | { kind: "recording"; recording: RecordingEvent }
  | { kind: "live"; live: LiveEvent }
  | { kind: "count" }
  | { kind: "none" };

export interface PreparedDelivery {
  appPk: number;
  idemKey: string;
  trigger: string;
  webhook: string;
  type: string | null;
  sessionId: string | null;
  body: string;
  receivedMs: number;
  /** 15-minute bucket (epoch seconds) the delivery is counted in. */
  bucketStart: number;
  /** `stored` when nothing but the count applies (a trigger Callboard does not know). */
  known: boolean;
  effect: Effect;
  /** What it changes in `client_sessions` (a join's clients, a leave's time), read before the transaction. */
  clients: ClientSessionChange | null;
}


/**
 * The statements of the ingest's write path, prepared once per connection, and how a
 * stored delivery's effect is applied with them (recordings, live sessions). Called by
 * the GroupCommitter (store.ts) inside its transaction.
 */
const STATUS_RANK = `CASE %s WHEN 'ended' THEN 2 WHEN 'ongoing' THEN 1 ELSE 0 END`;
const rank = (col: string) => STATUS_RANK.replace("%s", col);
const minOf = (a: string, b: string) => `CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL THEN ${a} ELSE min(${a}, ${b}) END`;
const maxOf = (a: string, b: string) => `CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL THEN ${a} ELSE max(${a}, ${b}) END`;

export function prepareStatements(sqlite: Database.Database) {
  return {
    delivery: sqlite.prepare<[number, string, string, string, string | null, string | null, string, string, number, number], { pk: number; repeat_count: number }>(
      `INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, last_received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (app_pk, idem_key) DO UPDATE SET repeat_count = repeat_count + 1, last_received_ms = excluded.last_received_ms
       RETURNING pk, repeat_count`,
    ),
    markFailed: sqlite.prepare<[number]>(`UPDATE webhook_deliveries SET outcome = 'failed' WHERE pk = ?`),
    count: sqlite.prepare<[number, string, number]>(
      `INSERT INTO event_counts (app_pk, trigger, bucket_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (app_pk, bucket_start, trigger) DO UPDATE SET count = count + 1`,
    ),
    recording: sqlite.prepare<[number, string, string, string | null, number | null, number, number]>(
      `INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_pk, session_id, start_time) DO NOTHING`,
    ),
    flagCall: sqlite.prepare<[number, number, string]>(
      `UPDATE calls SET has_recording = 1, updated_ms = ? WHERE app_pk = ? AND session_id = ? AND has_recording = 0`,
    ),
    session: sqlite.prepare<Record<string, string | number | null>, { pk: number }>(
      `INSERT INTO live_sessions (app_pk, session_id, kind, status, initiator, receiver, receiver_type, initiated_at, started_at, ended_at, last_event_ms)
       VALUES (@appPk, @sessionId, @kind, @status, @initiator, @receiver, @receiverType, @initiatedAt, @startedAt, @endedAt, @now)
       ON CONFLICT (app_pk, session_id) DO UPDATE SET
         -- call_initiated has no meeting twin: a meeting_* event makes the session a meeting.
         kind = CASE WHEN excluded.kind = 'meet' THEN 'meet' ELSE kind END,
         status = CASE WHEN ${rank("excluded.status")} > ${rank("status")} THEN excluded.status ELSE status END,
         initiator = coalesce(initiator, excluded.initiator),
         receiver = coalesce(receiver, excluded.receiver),
         receiver_type = coalesce(receiver_type, excluded.receiver_type),
         initiated_at = ${minOf("initiated_at", "excluded.initiated_at")},
         started_at = ${minOf("started_at", "excluded.started_at")},
         ended_at = ${maxOf("ended_at", "excluded.ended_at")},
         last_event_ms = max(last_event_ms, excluded.last_event_ms)
       RETURNING pk`,
    ),
    occupant: sqlite.prepare<[number, string, number, number | null, number | null]>(
      `INSERT INTO live_occupants (session_pk, name, joined_at, left_at, audio_only) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session_pk, name, joined_at) DO UPDATE SET
         left_at = ${maxOf("left_at", "excluded.left_at")},
         audio_only = coalesce(excluded.audio_only, audio_only)`,
    ),
    closeOpenStay: sqlite.prepare<[number, number, string]>(
      `UPDATE live_occupants SET left_at = ? WHERE pk = (
         SELECT pk FROM live_occupants WHERE session_pk = ? AND name = ? AND left_at IS NULL ORDER BY joined_at DESC LIMIT 1)`,
    ),
    rejection: sqlite.prepare<[number, number, string, string, string | null, number]>(
      `INSERT INTO webhook_rejections (app_pk, status, code, reason, trigger, received_ms) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    pruneRejections: sqlite.prepare<[number, number, number]>(
      `DELETE FROM webhook_rejections WHERE app_pk = ? AND pk <= (
         SELECT pk FROM webhook_rejections WHERE app_pk = ? ORDER BY pk DESC LIMIT 1 OFFSET ?)`,
    ),
    // Oldest first by pk (pk grows with time), a bounded slice per run; in ClickHouse
    // mode never a delivery the forwarder has not copied yet (lib/ingest/forwarder.ts).
    pruneDeliveries: sqlite.prepare<[number]>(
      `DELETE FROM webhook_deliveries WHERE pk IN (SELECT pk FROM webhook_deliveries ORDER BY pk LIMIT 5000) AND received_ms < ?
         AND pk <= coalesce((SELECT last_pk FROM clickhouse_forwarding WHERE stream = 'deliveries'), 9007199254740991)`,
    ),
    clients: prepareClientSessionStatements(sqlite),
    pruneLive: sqlite.prepare<[number, number]>(
      `DELETE FROM live_sessions WHERE (status = 'ended' AND last_event_ms < ?) OR last_event_ms < ?`,
    ),
  };
}
export type Statements = ReturnType<typeof prepareStatements>;

const STEP_STATUS = { initiated: "initiated", started: "ongoing", joined: "ongoing", left: "ongoing", ended: "ended" } as const;

function applyLive(st: Statements, appPk: number, ev: LiveEvent, nowMs: number): void {
  const row = st.session.get({
    appPk, sessionId: ev.sessionId, kind: ev.kind, status: STEP_STATUS[ev.step],
    initiator: ev.initiator, receiver: ev.receiver, receiverType: ev.receiverType,
    initiatedAt: ev.initiatedAt, startedAt: ev.startedAt, endedAt: ev.endedAt, now: nowMs,
  });
  if (!row) return;
  for (const occ of ev.occupants) {
    // A stay is (name, joined_at); a leave that lost its joined_at closes the latest open stay.
    if (occ.joinedAt === null && occ.leftAt !== null && st.closeOpenStay.run(occ.leftAt, row.pk, occ.name).changes > 0) continue;
    // An occupant listed by call_ended has left by then, even when left_at is missing.
    const leftAt = occ.leftAt ?? (ev.step === "ended" ? ev.endedAt : null);
    st.occupant.run(row.pk, occ.name, occ.joinedAt ?? 0, leftAt, occ.audioOnly === null ? null : occ.audioOnly ? 1 : 0);
  }
}

export function applyEffect(st: Statements, d: PreparedDelivery): void {
  const e = d.effect;
  if (e.kind === "recording") {
    const r = e.recording;
    st.recording.run(d.appPk, r.sessionId, r.recordingUrl, r.recordingDate, r.duration, r.startTime, d.receivedMs);
    st.flagCall.run(d.receivedMs, d.appPk, r.sessionId);
  } else if (e.kind === "live") {
    applyLive(st, d.appPk, e.live, d.receivedMs);
  }
}
