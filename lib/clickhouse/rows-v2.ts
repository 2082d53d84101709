import { encodeClosed } from "./schema-v2";

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
  /** A recording link was delivered for the call (calls_v2.has_link): set by the writer from the links stored when it writes. */
  hasLink?: boolean;
  audioX1000: number;
  videoX1000: number;
  durationX1000: number;
  durationSeconds: number;
  /** The platform's count (the calls_v2 column); the number of participant rows when absent. */
  totalParticipants?: number;
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

/**
 * `codes`: the session code is sent, not left to the column's DEFAULT (schema-v2.ts
 * CALLS_V2_SESSION_CODE): 18.16 fills a field a JSONEachRow insert leaves out with zero,
 * not with the column's DEFAULT expression.
 */
function callRow(s: CallStateV2, sign: 1 | -1, codes: CodesV2): Record<string, unknown> {
  // Written out, not spread: an object literal spreading four objects cost V8 several times more.
  const type = encodeClosed("type", s.type), mode = encodeClosed("mode", s.mode);
  const status = encodeClosed("status", s.status), receiverType = encodeClosed("receiver_type", s.receiverType);
  return {
    sign, version: s.version, app_pk: s.appPk, start_at: s.startAt, session_id: s.sessionId, session_code: codes.session(s.sessionId),
    type: type.code, type_other: type.other, mode: mode.code, mode_other: mode.other, status: status.code, status_other: status.other,
    receiver_type: receiverType.code, receiver_type_other: receiverType.other,
    platform_has_recording: s.platformHasRecording ? 1 : 0,
    total_audio_minutes_x1000: s.audioX1000, total_video_minutes_x1000: s.videoX1000, total_duration_minutes_x1000: s.durationX1000,
    duration_seconds: s.durationSeconds, total_participants: s.totalParticipants ?? s.participants.length,
    initiated_at: s.initiatedAt ?? null, started_at: s.startedAt ?? null, ended_at: s.endedAt ?? null,
    initiator: s.initiator ?? null, receiver: s.receiver ?? null, arrival: s.arrival, has_link: s.hasLink ? 1 : 0,
  };
}

/**
 * A state's participant rows, with the first row of each uid marked (`first_of_uid`), the
 * first joined and first unanswered ones too, and the call's filter dimensions copied
 * (schema-v2.ts PARTICIPANT_CALL_COLUMNS).
 */
function participantRows(s: CallStateV2, sign: 1 | -1, codes: CodesV2): Array<Record<string, unknown>> {
  const seen = new Set<string>(), seenJoined = new Set<string>(), seenUnanswered = new Set<string>();
  const sessionCode = codes.session(s.sessionId);
  const type = encodeClosed("type", s.type), mode = encodeClosed("mode", s.mode);
  const status = encodeClosed("status", s.status), receiverType = encodeClosed("receiver_type", s.receiverType);
  const totalParticipants = s.totalParticipants ?? s.participants.length;
  /** 1 the first time `uid` is added to `set` when `when` holds. */
  const firstIn = (set: Set<string>, uid: string, when: boolean) => (when && !set.has(uid) ? (set.add(uid), 1) : 0);
  return s.participants.map((p) => {
    const unanswered = p.state === "unanswered";
    return {
      sign, version: s.version, app_pk: s.appPk, start_at: s.startAt, session_code: sessionCode, seq: p.seq,
      uid_code: codes.uid(p.uid), first_of_uid: firstIn(seen, p.uid, true), is_joined: p.isJoined ? 1 : 0, is_unanswered: unanswered ? 1 : 0,
      total_audio_minutes_x1000: p.audioX1000, total_video_minutes_x1000: p.videoX1000, total_duration_minutes_x1000: p.durationX1000,
      first_joined_of_uid: firstIn(seenJoined, p.uid, p.isJoined), first_unanswered_of_uid: firstIn(seenUnanswered, p.uid, unanswered),
      type: type.code, type_other: type.other, mode: mode.code, mode_other: mode.other, status: status.code, status_other: status.other,
      receiver_type: receiverType.code, receiver_type_other: receiverType.other, total_participants: totalParticipants,
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
    out.calls.push(callRow(previous, -1, codes));
    out.participants.push(...participantRows(previous, -1, codes));
  }
  if (next) {
    out.calls.push(callRow(next, 1, codes));
    out.participants.push(...participantRows(next, 1, codes));
    for (const uid of new Set(next.participants.map((p) => p.uid))) out.uids.push({ app_pk: next.appPk, uid_code: codes.uid(uid), uid });
  }
  return out;
}

/** A state without what only one call's page needs (participants' details but their state, which the rows code as is_unanswered): what a cancel row is built from. */
export function summedState(s: CallStateV2): CallStateV2 {
  return {
    ...s,
    participants: s.participants.map((p) => ({ seq: p.seq, uid: p.uid, isJoined: p.isJoined, state: p.state ?? null, audioX1000: p.audioX1000, videoX1000: p.videoX1000, durationX1000: p.durationX1000 })),
  };
}

/**
 * The `call_raw` row of a change (schema-v2.ts CALL_RAW: v1's `calls` columns and
 * `previous`): the new state with its participants' details (or a delete), the state it
 * replaced (to complete the change if its signed rows did not all land), the raw record.
 */
export function callRawRow(appPk: number, sessionId: string, version: number, previous: CallStateV2 | undefined, next: CallStateV2 | undefined, raw: string | null): Record<string, unknown> {
  const before = previous ? JSON.stringify(summedState(previous)) : "";
  if (!next) {
    return { app_pk: appPk, session_id: sessionId, version, updated_ms: version, deleted: 1, source: "deleted", start_at: 0, first_seen_ms: 0, arrival: 0, previous: before, raw };
  }
  const p = next.participants;
  const n = p.length;
  // One loop filling the parallel arrays (a map per column cost a closure call per value).
  const seq = new Array<number>(n), uid = new Array<string>(n), state = new Array<string | null>(n), joined = new Array<number>(n);
  const audio = new Array<number>(n), video = new Array<number>(n), duration = new Array<number>(n), device = new Array<string | null>(n);
  const joinedAt = new Array<number | null>(n), leftAt = new Array<number | null>(n), mid = new Array<string | null>(n), extra = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const x = p[i];
    seq[i] = x.seq; uid[i] = x.uid; state[i] = x.state ?? null; joined[i] = x.isJoined ? 1 : 0;
    audio[i] = x.audioX1000; video[i] = x.videoX1000; duration[i] = x.durationX1000; device[i] = x.deviceId ?? null;
    joinedAt[i] = x.joinedAt ?? null; leftAt[i] = x.leftAt ?? null; mid[i] = x.mid ?? null; extra[i] = x.raw ?? null;
  }
  return {
    app_pk: appPk, session_id: sessionId, version, deleted: 0,
    mid: next.mid ?? null, type: next.type, mode: next.mode, status: next.status, initiator: next.initiator ?? null, receiver: next.receiver ?? null,
    receiver_type: next.receiverType, initiated_at: next.initiatedAt ?? null, started_at: next.startedAt ?? null, ended_at: next.endedAt ?? null,
    start_at: next.startAt, platform_has_recording: next.platformHasRecording ? 1 : 0,
    total_audio_minutes_x1000: next.audioX1000, total_video_minutes_x1000: next.videoX1000, total_duration_minutes_x1000: next.durationX1000,
    duration_seconds: next.durationSeconds, total_participants: next.totalParticipants ?? n, source: next.source ?? "sync", content_hash: next.contentHash ?? null,
    raw, first_seen_ms: next.firstSeenMs, updated_ms: version,
    p_seq: seq, p_uid: uid, p_state: state, p_is_joined: joined, p_total_audio_minutes_x1000: audio, p_total_video_minutes_x1000: video,
    p_total_duration_minutes_x1000: duration, p_device_id: device, p_joined_at: joinedAt, p_left_at: leftAt, p_mid: mid, p_raw: extra,
    arrival: next.arrival, previous: before, has_link: next.hasLink ? 1 : 0,
  };
}

/** A call_raw row as read (its columns but `raw` and `previous`, 64-bit integers as numbers). */
export type CallRawRead = Record<string, unknown>;

/** The state a call_raw row holds (undefined for a delete): what the next change cancels. */
export function stateOfCallRaw(r: CallRawRead): CallStateV2 | undefined {
  if (Number(r.deleted) === 1) return undefined;
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const seq = r.p_seq as number[];
  const at = <T>(col: string, i: number) => (r[col] as T[])[i];
  return {
    appPk: Number(r.app_pk), sessionId: String(r.session_id), version: Number(r.version), startAt: Number(r.start_at),
    type: r.type as string | null, mode: r.mode as string | null, status: r.status as string | null, receiverType: r.receiver_type as string | null,
    platformHasRecording: Number(r.platform_has_recording) === 1, hasLink: Number(r.has_link) === 1,
    audioX1000: Number(r.total_audio_minutes_x1000), videoX1000: Number(r.total_video_minutes_x1000), durationX1000: Number(r.total_duration_minutes_x1000),
    durationSeconds: Number(r.duration_seconds), totalParticipants: Number(r.total_participants),
    initiatedAt: n(r.initiated_at), startedAt: n(r.started_at), endedAt: n(r.ended_at),
    initiator: r.initiator as string | null, receiver: r.receiver as string | null, mid: r.mid as string | null,
    firstSeenMs: Number(r.first_seen_ms), arrival: Number(r.arrival), source: String(r.source), contentHash: r.content_hash as string | null,
    participants: seq.map((s, i) => ({
      seq: Number(s), uid: at<string>("p_uid", i), isJoined: Number(at("p_is_joined", i)) === 1,
      audioX1000: Number(at("p_total_audio_minutes_x1000", i)), videoX1000: Number(at("p_total_video_minutes_x1000", i)),
      durationX1000: Number(at("p_total_duration_minutes_x1000", i)), state: at<string | null>("p_state", i), deviceId: at<string | null>("p_device_id", i),
      joinedAt: n(at("p_joined_at", i)), leftAt: n(at("p_left_at", i)), mid: at<string | null>("p_mid", i), raw: at<string | null>("p_raw", i),
    })),
  };
}
