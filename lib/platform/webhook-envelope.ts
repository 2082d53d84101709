import { z } from "zod";
import { httpUrlOrNull, schemeOf } from "@/lib/http/link-url";
import { MAX_MINUTES } from "@/lib/platform/call-record";

/**
 * The webhook envelope and the few fields of `data` Callboard reads. Everything else in
 * a delivery is kept as received (the raw body) and never needs to parse.
 */
export const envelopeSchema = z.object({
  trigger: z.string().min(1, "must be a non-empty string").max(100, "must be at most 100 characters"),
  data: z.record(z.string(), z.unknown(), { error: "must be a JSON object" }),
  appId: z.string().min(1, "must be a non-empty string").max(100, "must be at most 100 characters"),
  region: z.string().min(1, "must be a non-empty string").max(20, "must be at most 20 characters"),
  webhook: z.string().min(1, "must be a non-empty string").max(200, "must be at most 200 characters"),
  type: z.string().max(20, "must be at most 20 characters").optional(),
});
export type Envelope = z.infer<typeof envelopeSchema>;

export const RECORDING_TRIGGER = "recording_generated";
export const CALL_TRIGGERS = ["call_initiated", "call_started", "call_participant_joined", "call_participant_left", "call_ended"] as const;
export const MEETING_TRIGGERS = ["meeting_started", "meeting_participant_joined", "meeting_participant_left", "meeting_ended"] as const;
export const CHAT_TRIGGERS = [
  "message_sent", "message_edited", "message_deleted", "message_reaction_added", "message_reaction_removed",
  "user_blocked", "user_unblocked", "user_mentioned",
  "group_created", "group_updated", "group_deleted", "group_member_joined", "group_member_left",
  "group_member_added", "group_member_kicked", "group_member_banned", "group_member_unbanned",
  "group_member_scope_changed", "group_owner_transferred",
  "user_connection_status_changed", "message_delivery_receipt", "message_read_receipt",
] as const;

export type TriggerCategory = "chat" | "call" | "meeting" | "recording" | "unknown";
export type LiveTrigger = (typeof CALL_TRIGGERS)[number] | (typeof MEETING_TRIGGERS)[number];

const categories = new Map<string, TriggerCategory>([
  [RECORDING_TRIGGER, "recording"],
  ...CALL_TRIGGERS.map((t) => [t, "call"] as [string, TriggerCategory]),
  ...MEETING_TRIGGERS.map((t) => [t, "meeting"] as [string, TriggerCategory]),
  ...CHAT_TRIGGERS.map((t) => [t, "chat"] as [string, TriggerCategory]),
]);

export function triggerCategory(trigger: string): TriggerCategory {
  return categories.get(trigger) ?? "unknown";
}

export function isLiveTrigger(trigger: string): trigger is LiveTrigger {
  const c = categories.get(trigger);
  return c === "call" || c === "meeting";
}

/** The step of a live trigger, the same for a call and a meeting. */
export type LiveStep = "initiated" | "started" | "joined" | "left" | "ended";
export function liveStep(trigger: LiveTrigger): LiveStep {
  if (trigger === "call_initiated") return "initiated";
  if (trigger.endsWith("_started")) return "started";
  if (trigger.endsWith("_participant_joined")) return "joined";
  if (trigger.endsWith("_participant_left")) return "left";
  return "ended";
}

type Obj = Record<string, unknown>;
export const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (v: unknown, ...path: string[]): unknown => {
  let cur = v;
  for (const k of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
};

/** A number that may arrive as a number or a numeric string ("12.5"). */
export function toNumber(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.trim() !== "" && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  return null;
}

/**
 * Epoch seconds from a time that "may be seconds or milliseconds": read as what it is
 * (above 1e12 it can only be milliseconds: 1e12 s is 33,000 years away).
 */
export function toEpochSeconds(v: unknown): number | null {
  const n = toNumber(v);
  if (n === null || n < 0) return null;
  return Math.floor(n > 1e12 ? n / 1000 : n);
}

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : null);

export interface Occupant {
  name: string;
  joinedAt: number | null;
  leftAt: number | null;
  audioOnly: boolean | null;
}

function occupantOf(v: unknown): Occupant | null {
  if (!isObject(v)) return null;
  const audio = v.audio_call;
  return {
    name: typeof v.name === "string" ? v.name : str(v.name) ?? "",
    joinedAt: toEpochSeconds(v.joined_at),
    leftAt: toEpochSeconds(v.left_at),
    audioOnly: audio === true || audio === "true" ? true : audio === false || audio === "false" ? false : null,
  };
}

/** What a call or meeting trigger says about its session. */
export interface LiveEvent {
  step: LiveStep;
  kind: "call" | "meet";
  sessionId: string;
  initiator: string | null;
  receiver: string | null;
  receiverType: string | null;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  /** The one occupant of joined / left; every occupant of ended. */
  occupants: Occupant[];
}

export interface RecordingEvent {
  sessionId: string;
  startTime: number;
  recordingUrl: string;
  recordingDate: string | null;
  duration: number | null;
}

/** A known trigger whose `data` lacks what Callboard needs to apply it. */
export class InvalidEventError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = "InvalidEventError";
  }
}

function requireSessionId(v: unknown, field: string): string {
  const s = str(v);
  if (!s) throw new InvalidEventError(field, `${field} is required (a non-empty string)`);
  if (s.length > 200) throw new InvalidEventError(field, `${field} must be at most 200 characters`);
  return s;
}

/**
 * A recording's length in seconds; an impossible one (negative, or past the longest
 * possible call: MAX_MINUTES) is stored as unknown (null) rather than refusing the
 * delivery, whose link is what matters.
 */
function recordingSeconds(v: unknown): number | null {
  const n = toNumber(v);
  return n !== null && n >= 0 && n <= MAX_MINUTES * 60 ? n : null;
}

export function parseRecording(data: Obj): RecordingEvent {
  const sessionId = requireSessionId(data.sessionId, "data.sessionId");
  const startTime = toEpochSeconds(data.startTime);
  if (startTime === null) throw new InvalidEventError("data.startTime", "data.startTime is required (epoch seconds, as a number or numeric string)");
  const url = data.recording_url;
  if (typeof url !== "string" || url.length === 0) throw new InvalidEventError("data.recording_url", "data.recording_url is required (a string)");
  if (url.length > 4096) throw new InvalidEventError("data.recording_url", "data.recording_url must be at most 4096 characters");
  // Shown as a link on Recordings and call pages: a `data:` or `javascript:` URL there would run in the dashboard.
  if (httpUrlOrNull(url) === null) {
    throw new InvalidEventError("data.recording_url", `data.recording_url must be an absolute http or https URL (got ${schemeOf(url)})`);
  }
  return {
    sessionId,
    startTime,
    recordingUrl: url,
    recordingDate: typeof data.recordingDate === "string" ? data.recordingDate : str(data.recordingDate),
    duration: recordingSeconds(data.duration),
  };
}

export function parseLive(trigger: LiveTrigger, envelopeType: string | undefined, data: Obj): LiveEvent {
  const step = liveStep(trigger);
  const kind: "call" | "meet" = trigger.startsWith("meeting_") || envelopeType === "meet" ? "meet" : "call";
  const ev: LiveEvent = {
    step, kind, sessionId: "", initiator: null, receiver: null, receiverType: null,
    initiatedAt: null, startedAt: null, endedAt: null, occupants: [],
  };
  if (step === "initiated") {
    // `call` is a message-like record; the session sits in data.entities.on.entity.
    const call = data.call;
    const entity = at(call, "data", "entities", "on", "entity");
    ev.sessionId = requireSessionId(data.sessionId ?? at(entity, "sessionid") ?? at(entity, "sessionId"), "data.call.data.entities.on.entity.sessionid");
    ev.initiator = str(at(call, "sender")) ?? str(at(call, "data", "entities", "by", "entity", "uid"));
    ev.receiver = str(at(call, "receiver"));
    ev.receiverType = str(at(call, "receiverType"));
    ev.initiatedAt = toEpochSeconds(at(entity, "initiatedAt")) ?? toEpochSeconds(at(call, "sentAt"));
    return ev;
  }
  ev.sessionId = requireSessionId(data.sessionId, "data.sessionId");
  ev.startedAt = toEpochSeconds(data.created_at);
  if (step === "joined" || step === "left") {
    const occ = occupantOf(data.occupant);
    if (!occ) throw new InvalidEventError("data.occupant", "data.occupant is required (an object)");
    ev.occupants = [occ];
  } else if (step === "ended") {
    ev.endedAt = toEpochSeconds(data.destroyed_at);
    const all = data.all_occupants;
    const list = Array.isArray(all) ? all : isObject(all) ? Object.values(all) : [];
    ev.occupants = list.map(occupantOf).filter((o): o is Occupant => o !== null);
  }
  return ev;
}

/**
 * The event's own time (epoch seconds) where the trigger carries one, for counting per
 * day; otherwise null and the receive time counts (user and most group triggers carry
 * no time of the event itself).
 */
export function eventTime(trigger: string, data: Obj): number | null {
  let t: unknown;
  switch (trigger) {
    case "message_sent":
    case "user_mentioned":
      t = at(data, "message", "sentAt");
      break;
    case "message_edited":
    case "message_deleted":
      t = at(data, "message", "updatedAt") ?? at(data, "message", "sentAt");
      break;
    case "message_reaction_added":
    case "message_reaction_removed":
      t = at(data, "reaction", "reactedAt");
      break;
    case "message_delivery_receipt":
    case "message_read_receipt":
      t = at(data, "body", "timestamp");
      break;
    case "user_connection_status_changed":
      t = data.timestamp;
      break;
    case "group_created":
      t = at(data, "group", "createdAt");
      break;
    case "group_updated":
      t = at(data, "group", "updatedAt");
      break;
    case "call_initiated":
      t = at(data, "call", "sentAt");
      break;
    case "call_ended":
    case "meeting_ended":
      t = data.destroyed_at;
      break;
    // A join or leave happened when its occupant says (replayed or late deliveries count on their own day).
    case "call_participant_joined":
    case "meeting_participant_joined":
      t = at(data, "occupant", "joined_at") ?? data.created_at;
      break;
    case "call_participant_left":
    case "meeting_participant_left":
      t = at(data, "occupant", "left_at") ?? data.created_at;
      break;
    case "recording_generated":
      t = data.startTime;
      break;
    default:
      t = data.created_at;
  }
  return toEpochSeconds(t);
}

/** Event counts are kept per 15 minutes: every time zone's offset is a multiple of it. */
export const COUNT_BUCKET_SECONDS = 900;
const MIN_EVENT_TIME = 1_000_000_000; // 2001: anything older is not an event time

/**
 * The 15-minute bucket (epoch seconds) a delivery is counted in: the event's own time
 * when it carries a plausible one (not before 2001, not more than a day ahead of its
 * arrival), else the time it arrived. The ingest counts with it and the ClickHouse
 * forwarder finds the counts a stored delivery touched with it.
 */
export function countBucket(trigger: string, data: Obj, receivedMs: number): number {
  const t = eventTime(trigger, data);
  const when = t !== null && t >= MIN_EVENT_TIME && t * 1000 <= receivedMs + 86_400_000 ? t : Math.floor(receivedMs / 1000);
  return when - (when % COUNT_BUCKET_SECONDS);
}
