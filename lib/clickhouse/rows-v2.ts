import { encodeClosed, type ClosedSet } from "./schema-v2";

/**
 * The rows of schema v2 (schema-v2.ts) for one change of a call: the cancel rows of the
 * state it replaces (the previous state written again with sign −1, same version, same
 * key), then the new state (+1). A delete is the cancel rows alone. How a writer finds the
 * previous state and lands each change exactly once: writer-v2.ts.
 */

export interface ParticipantStateV2 {
  seq: number;
  uid: string;
  isJoined: boolean;
  audioX1000: number;
  videoX1000: number;
  durationX1000: number;
  state?: string | null;
  deviceId?: string | null;
  joinedAt?: number | null;
  leftAt?: number | null;
  mid?: string | null;
  /** The participant's fields without a column, as JSON (null: none). */
  raw?: string | null;
}

export interface CallStateV2 {
  appPk: number;
  sessionId: string;
  version: number;
  /** Epoch seconds. */
  startAt: number;
  type: string | null;
  mode: string | null;
  status: string | null;
  receiverType: string | null;
  platformHasRecording: boolean;
  audioX1000: number;
  videoX1000: number;
  durationX1000: number;
  durationSeconds: number;
  initiatedAt?: number | null;
  startedAt?: number | null;
  endedAt?: number | null;
  initiator?: string | null;
  receiver?: string | null;
  mid?: string | null;
  firstSeenMs: number;
  arrival: number;
  participants: readonly ParticipantStateV2[];
  /** Who wrote this state ('sync', 'copy', …): a sync re-writes a call whose stored state it did not write. */
  source?: string;
  /** The sync's hash of the platform's record (unchanged records are not written again). */
  contentHash?: string | null;
}

/** A state's codes, asked of the server once per batch (writer-v2.ts): every writer codes alike. */
export interface CodesV2 {
  /** UID_CODE_SQL(uid), as decimal text. */
  uid(uid: string): string;
  /** SESSION_CODE_SQL(sessionId), as decimal text. */
  session(sessionId: string): string;
}

export interface ChangeRowsV2 {
  calls: Array<Record<string, unknown>>;
  participants: Array<Record<string, unknown>>;
  /** (app, uid code, uid) of every uid the new state codes; repeats collapse in `uids`. */
  uids: Array<Record<string, unknown>>;
}

/** A closed set's two columns (schema-v2.ts encodeClosed). */
function closed(prefix: ClosedSet, value: string | null): Record<string, string> {
  const { code, other } = encodeClosed(prefix, value);
  return { [prefix]: code, [`${prefix}_other`]: other };
}

function callRow(s: CallStateV2, sign: 1 | -1, sessionCode: string): Record<string, unknown> {
  return {
    sign, version: s.version, app_pk: s.appPk, start_at: s.startAt, session_id: s.sessionId, session_code: sessionCode,
    ...closed("type", s.type), ...closed("mode", s.mode), ...closed("status", s.status), ...closed("receiver_type", s.receiverType),
    platform_has_recording: s.platformHasRecording ? 1 : 0,
    total_audio_minutes_x1000: s.audioX1000, total_video_minutes_x1000: s.videoX1000, total_duration_minutes_x1000: s.durationX1000,
    duration_seconds: s.durationSeconds, total_participants: s.participants.length,
    initiated_at: s.initiatedAt ?? null, started_at: s.startedAt ?? null, ended_at: s.endedAt ?? null,
    initiator: s.initiator ?? null, receiver: s.receiver ?? null, mid: s.mid ?? null,
    first_seen_ms: s.firstSeenMs, arrival: s.arrival,
  };
}

function participantRows(s: CallStateV2, sign: 1 | -1, codes: CodesV2): Array<Record<string, unknown>> {
  const seen = new Set<string>();
  const sessionCode = codes.session(s.sessionId);
  return s.participants.map((p) => {
    const first = !seen.has(p.uid);
    seen.add(p.uid);
    return {
      sign, version: s.version, app_pk: s.appPk, start_at: s.startAt, session_code: sessionCode, seq: p.seq,
      uid_code: codes.uid(p.uid), first_of_uid: first ? 1 : 0, is_joined: p.isJoined ? 1 : 0,
      total_audio_minutes_x1000: p.audioX1000, total_video_minutes_x1000: p.videoX1000, total_duration_minutes_x1000: p.durationX1000,
    };
  });
}

/**
 * The rows replacing `previous` by `next` (either may be absent: a new call, a delete).
 * `codes` gives uid and session codes as decimal text (the server's `cityHash64`, UID_CODE_SQL
 * and SESSION_CODE_SQL: asked of the server once per batch, so every writer codes alike).
 */
export function changeRowsV2(previous: CallStateV2 | undefined, next: CallStateV2 | undefined, codes: CodesV2): ChangeRowsV2 {
  if (previous && next && (previous.appPk !== next.appPk || previous.sessionId !== next.sessionId)) throw new Error("a change replaces a state of the same call");
  if (previous && next && next.version <= previous.version) throw new Error("a new state needs a higher version than the one it replaces");
  const out: ChangeRowsV2 = { calls: [], participants: [], uids: [] };
  if (previous) {
    out.calls.push(callRow(previous, -1, codes.session(previous.sessionId)));
    out.participants.push(...participantRows(previous, -1, codes));
  }
  if (next) {
    out.calls.push(callRow(next, 1, codes.session(next.sessionId)));
    out.participants.push(...participantRows(next, 1, codes));
    for (const uid of new Set(next.participants.map((p) => p.uid))) out.uids.push({ app_pk: next.appPk, uid_code: codes.uid(uid), uid });
  }
  return out;
}

/** A state without what only one call's page needs (participants' details): what a cancel row is built from. */
export function summedState(s: CallStateV2): CallStateV2 {
  return { ...s, participants: s.participants.map((p) => ({ seq: p.seq, uid: p.uid, isJoined: p.isJoined, audioX1000: p.audioX1000, videoX1000: p.videoX1000, durationX1000: p.durationX1000 })) };
}

/**
 * The `call_raw` row of a change (schema-v2.ts CALL_RAW): the new state (or a delete), the
 * one it replaced (for completing the change if its signed rows did not all land), the raw record.
 */
export function callRawRow(appPk: number, sessionId: string, version: number, previous: CallStateV2 | undefined, next: CallStateV2 | undefined, raw: string | null): Record<string, unknown> {
  return {
    app_pk: appPk, session_id: sessionId, version, deleted: next ? 0 : 1,
    source: next?.source ?? "deleted", content_hash: next?.contentHash ?? null, status: next?.status ?? null,
    first_seen_ms: next?.firstSeenMs ?? 0, arrival: next?.arrival ?? 0,
    state: next ? JSON.stringify(next) : "", previous: previous ? JSON.stringify(summedState(previous)) : "", raw,
  };
}
