import type { ClientSessionFacts } from "@/lib/platform/client-session-facts";

/**
 * The shape of every row written to the ClickHouse fact tables (schema.ts), built in one
 * place for every writer: the copy from SQLite (copy.ts), the sync and the webhook
 * forwarding. Inserted as JSONEachRow objects.
 */

/** Decimal minutes as the integer thousandths the tables hold (the platform sends at most 3 decimals). */
export function thousandths(minutes: number): number {
  return Math.round(minutes * 1000);
}

export interface ParticipantFact {
  seq: number;
  uid: string;
  state: string | null;
  isJoined: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  deviceId: string | null;
  joinedAt: number | null;
  leftAt: number | null;
  mid: string | null;
  /** Fields without a column, as JSON (null: none). */
  raw: string | null;
}

/** One version of a call, as the SQLite `calls` row holds it, with all its participants. */
export interface CallFact {
  appPk: number;
  sessionId: string;
  /** Higher than every earlier version of this call (the writer's ms stamp: updated_ms). */
  version: number;
  mid: string | null;
  type: string | null;
  mode: string | null;
  status: string | null;
  initiator: string | null;
  receiver: string | null;
  receiverType: string | null;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  startAt: number;
  platformHasRecording: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  durationSeconds: number;
  totalParticipants: number;
  source: string;
  contentHash: string | null;
  /** The platform's record as JSON text. */
  raw: string | null;
  firstSeenMs: number;
  updatedMs: number;
  /** In the platform's order (seq ascending). */
  participants: ParticipantFact[];
  /** When the call first arrived, as an ordinal kept across versions (schema.ts CALLS `arrival`): the SQLite pk when copied. */
  arrival: number;
}

/** A `calls` row: the call and its participants as parallel arrays. */
export function callRow(c: CallFact): Record<string, unknown> {
  const p = c.participants;
  return {
    app_pk: c.appPk, session_id: c.sessionId, version: c.version, deleted: 0,
    mid: c.mid, type: c.type, mode: c.mode, status: c.status, initiator: c.initiator, receiver: c.receiver, receiver_type: c.receiverType,
    initiated_at: c.initiatedAt, started_at: c.startedAt, ended_at: c.endedAt, start_at: c.startAt,
    platform_has_recording: c.platformHasRecording ? 1 : 0,
    total_audio_minutes_x1000: thousandths(c.totalAudioMinutes),
    total_video_minutes_x1000: thousandths(c.totalVideoMinutes),
    total_duration_minutes_x1000: thousandths(c.totalDurationMinutes),
    duration_seconds: c.durationSeconds, total_participants: c.totalParticipants,
    source: c.source, content_hash: c.contentHash, raw: c.raw, first_seen_ms: c.firstSeenMs, updated_ms: c.updatedMs,
    p_seq: p.map((x) => x.seq),
    p_uid: p.map((x) => x.uid),
    p_state: p.map((x) => x.state),
    p_is_joined: p.map((x) => (x.isJoined ? 1 : 0)),
    p_total_audio_minutes_x1000: p.map((x) => thousandths(x.totalAudioMinutes)),
    p_total_video_minutes_x1000: p.map((x) => thousandths(x.totalVideoMinutes)),
    p_total_duration_minutes_x1000: p.map((x) => thousandths(x.totalDurationMinutes)),
    p_device_id: p.map((x) => x.deviceId),
    p_joined_at: p.map((x) => x.joinedAt),
    p_left_at: p.map((x) => x.leftAt),
    p_mid: p.map((x) => x.mid),
    p_raw: p.map((x) => x.raw),
    arrival: c.arrival,
  };
}

/** The tombstone of a deleted call: a newer version that every report skips. */
export function callTombstone(appPk: number, sessionId: string, version: number): Record<string, unknown> {
  return { app_pk: appPk, session_id: sessionId, version, deleted: 1, start_at: 0, source: "deleted", first_seen_ms: 0, updated_ms: version, arrival: 0 };
}

export interface RecordingFact {
  appPk: number;
  sessionId: string;
  recordingUrl: string;
  recordingDate: string | null;
  duration: number | null;
  startTime: number | null;
  receivedMs: number;
}

/** A `recordings` row; its identity in the call is start_time (−received_ms without one, as SQLite keeps those apart). */
export function recordingRow(r: RecordingFact, version = r.receivedMs): Record<string, unknown> {
  return {
    app_pk: r.appPk, session_id: r.sessionId, start_key: r.startTime ?? -r.receivedMs, version, deleted: 0,
    recording_url: r.recordingUrl, recording_date: r.recordingDate, duration: r.duration, start_time: r.startTime, received_ms: r.receivedMs,
  };
}

/** An `event_counts` row: the bucket's absolute count (the highest count of a bucket wins). */
export function eventCountRow(r: { appPk: number; trigger: string; bucketStart: number; count: number }): Record<string, unknown> {
  return { app_pk: r.appPk, trigger: r.trigger, bucket_start: r.bucketStart, count: r.count };
}

export interface DeliveryFact {
  appPk: number;
  idemKey: string;
  trigger: string;
  category: string;
  webhook: string;
  type: string | null;
  sessionId: string | null;
  outcome: string;
  body: string;
  receivedMs: number;
  bucketStart: number;
  repeatCount: number;
  lastReceivedMs: number;
}

/** A `webhook_deliveries` row; version = last_received_ms unless given (a later repeat replaces it). */
export function deliveryRow(d: DeliveryFact, version = d.lastReceivedMs): Record<string, unknown> {
  return {
    app_pk: d.appPk, idem_key: d.idemKey, version, trigger: d.trigger, category: d.category, webhook: d.webhook, type: d.type,
    session_id: d.sessionId, outcome: d.outcome, body: d.body, received_ms: d.receivedMs, bucket_start: d.bucketStart,
    repeat_count: d.repeatCount, last_received_ms: d.lastReceivedMs,
  };
}

/** A participant session as the ingest keeps it (lib/ingest/client-sessions.ts). */
export type ClientSessionFact = ClientSessionFacts;

/** A `client_sessions` row; version = SQLite's change stamp (seq), 0 for rows filled from ClickHouse's own deliveries. */
export function clientSessionRow(c: ClientSessionFact, version: number): Record<string, unknown> {
  return {
    app_pk: c.appPk, session_id: c.sessionId, occupant: c.occupant, joined_key: c.joinedAt ?? -1, version,
    joined_at: c.joinedAt, counted_at: c.countedAt, left_at: c.leftAt, trigger: c.trigger,
    platform: c.platform, sdk: c.sdk, call_version: c.callVersion, is_audio_only: c.isAudioOnly, audio_call: c.audioCall,
    is_video_muted: c.isVideoMuted, start_recording_on_call_start: c.startRecordingOnCallStart, received_ms: c.receivedMs,
  };
}

/** A SQLite `client_sessions` row (snake_case, as better-sqlite3 reads it) as the ClickHouse row, its seq the version. */
export interface ClientSessionSqliteRow {
  app_pk: number; session_id: string; occupant: string; joined_at: number | null; counted_at: number; left_at: number | null; trigger: string;
  platform: string | null; sdk: string | null; call_version: string | null; is_audio_only: number | null; audio_call: number | null;
  is_video_muted: number | null; start_recording_on_call_start: number | null; received_ms: number; seq: number;
}

export function clientSessionRowOfSqlite(r: ClientSessionSqliteRow): Record<string, unknown> {
  return clientSessionRow({
    appPk: r.app_pk, sessionId: r.session_id, occupant: r.occupant, joinedAt: r.joined_at, countedAt: r.counted_at, leftAt: r.left_at,
    trigger: r.trigger, platform: r.platform, sdk: r.sdk, callVersion: r.call_version, isAudioOnly: r.is_audio_only, audioCall: r.audio_call,
    isVideoMuted: r.is_video_muted, startRecordingOnCallStart: r.start_recording_on_call_start, receivedMs: r.received_ms,
  }, r.seq);
}
