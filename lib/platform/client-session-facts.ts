import { isObject, toEpochSeconds } from "./webhook-envelope";

/**
 * What a participant join or leave webhook says about a participant session: the client
 * it joined with and when it left. lib/ingest/client-sessions.ts keeps these in SQLite's
 * `client_sessions`, the ClickHouse copy and forwarder in ClickHouse's.
 *
 * Clients and platforms kept per participant session (table `client_sessions`,
 * docs/decisions/0017-client-sessions.md): what a `call_participant_joined` /
 * `meeting_participant_joined` says the participant joined with (its `initial_config`
 * and the occupant's `audio_call`), written by the ingest in the transaction that stores
 * the delivery, and the time the participant left once a leave (or the call's end) says so.
 *
 * One row per participant session: (app, session, occupant, joined_at). The webhooks name
 * an occupant by display name, not uid, so the name is the participant's identity here,
 * as in the live state and the deliveries' idempotency keys. A repeated join changes
 * nothing (the row exists).
 *
 * Values are read as the clients report always read them (SQLite's `json_extract` of the
 * stored body: booleans as 1/0, objects as JSON text), then normalised: text trimmed and
 * lower case (numbers as text), flags 1/0 from true/false/"true"/"false"/1/0/"1"/"0",
 * anything else null. A hostile or missing field is stored as null; nothing here throws.
 */

export const JOIN_TRIGGERS = ["call_participant_joined", "meeting_participant_joined"] as const;
/** Triggers that close a participant session. */
export const LEAVE_TRIGGERS = ["call_participant_left", "meeting_participant_left", "call_ended", "meeting_ended"] as const;

/** A joined participant session as `client_sessions` holds it. */
export interface ClientSessionFacts {
  appPk: number;
  sessionId: string;
  /** The occupant's name ('' when the join gave none). */
  occupant: string;
  /** occupant.joined_at in epoch seconds (null: not said). */
  joinedAt: number | null;
  /** joinedAt, else the second the join was received: the time the report's period filters. */
  countedAt: number;
  leftAt: number | null;
  trigger: string;
  platform: string | null;
  sdk: string | null;
  callVersion: string | null;
  isAudioOnly: number | null;
  audioCall: number | null;
  isVideoMuted: number | null;
  startRecordingOnCallStart: number | null;
  receivedMs: number;
}

/** A stay that ended: the occupant, the join it ends (null: the latest open one), when. */
export interface ClientStayEnd {
  occupant: string;
  joinedAt: number | null;
  leftAt: number;
  /** The end's own time stands in for a left_at the occupant lacks: it closes a stay still open, never moves a known leave. */
  ifOpen: boolean;
}

export type ClientSessionChange =
  | { kind: "join"; facts: ClientSessionFacts }
  | { kind: "leave"; appPk: number; sessionId: string; stays: ClientStayEnd[]; receivedMs: number };

/** A JSON value as SQLite's `json_extract` returns it: booleans as 1/0, objects and arrays as their JSON text. */
function extracted(v: unknown): unknown {
  if (v === true) return 1;
  if (v === false) return 0;
  if (v !== null && typeof v === "object") return JSON.stringify(v);
  return v ?? null;
}

const text = (v: unknown): string | null => {
  const x = extracted(v);
  return typeof x === "string" && x.trim() !== "" ? x.trim().toLowerCase() : typeof x === "number" ? String(x) : null;
};
const flag = (v: unknown): number | null => {
  const x = extracted(v);
  return x === "true" || x === 1 || x === "1" ? 1 : x === "false" || x === 0 || x === "0" ? 0 : null;
};
const seconds = (v: unknown): number | null => toEpochSeconds(extracted(v));
/** The occupant's name as the live state reads it: a string, a finite number as text, else ''. */
const nameOf = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : "");

const isJoin = (trigger: string) => (JOIN_TRIGGERS as readonly string[]).includes(trigger);
const isLeave = (trigger: string) => (LEAVE_TRIGGERS as readonly string[]).includes(trigger);

/** What a join says it joined with (the body's `data`; anything but an object says nothing). */
export function joinFacts(appPk: number, sessionId: string, trigger: string, data: unknown, receivedMs: number): ClientSessionFacts {
  const d = isObject(data) ? data : {};
  const occupant = isObject(d.occupant) ? d.occupant : {};
  const config = isObject(d.initial_config) ? d.initial_config : {};
  const joinedAt = seconds(occupant.joined_at);
  return {
    appPk, sessionId, trigger, receivedMs,
    occupant: nameOf(occupant.name),
    joinedAt,
    countedAt: joinedAt ?? Math.floor(receivedMs / 1000),
    leftAt: null,
    platform: text(config.platform),
    sdk: text(config.sdk),
    callVersion: text(config.call_version),
    isAudioOnly: flag(config.is_audio_only),
    audioCall: flag(occupant.audio_call),
    isVideoMuted: flag(config.is_video_muted),
    startRecordingOnCallStart: flag(config.start_recording_on_call_start),
  };
}

/** The stays a leave or an end closes: each occupant with its left_at (an end's own time where an occupant has none). */
function stayEnds(trigger: string, data: Record<string, unknown>): ClientStayEnd[] {
  const ended = trigger.endsWith("_ended");
  const all = ended ? data.all_occupants : [data.occupant];
  const list = Array.isArray(all) ? all : isObject(all) ? Object.values(all) : [];
  const endedAt = ended ? seconds(data.destroyed_at) : null;
  const out: ClientStayEnd[] = [];
  for (const o of list) {
    if (!isObject(o)) continue;
    const own = seconds(o.left_at);
    const leftAt = own ?? endedAt;
    if (leftAt !== null) out.push({ occupant: nameOf(o.name), joinedAt: seconds(o.joined_at), leftAt, ifOpen: own === null });
  }
  return out;
}

/** What a stored delivery changes in `client_sessions` (null: nothing). Never throws. */
export function clientSessionChange(appPk: number, trigger: string, sessionId: string | null, data: unknown, receivedMs: number): ClientSessionChange | null {
  if (isJoin(trigger)) return { kind: "join", facts: joinFacts(appPk, sessionId ?? "", trigger, data, receivedMs) };
  if (!isLeave(trigger) || sessionId === null || !isObject(data)) return null;
  const stays = stayEnds(trigger, data);
  return stays.length === 0 ? null : { kind: "leave", appPk, sessionId, stays, receivedMs };
}

