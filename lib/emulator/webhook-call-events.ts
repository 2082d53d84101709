// Call, meeting and recording webhook builders from a call record (seed trigger table:
// call_initiated, call_started, call_participant_joined/left, call_ended, meeting_* and
// recording_generated).
import { hashString, hex, mix, mulberry32 } from "./prng";
import type { CallParticipant, CallRecord, JsonObject } from "./types";
import { conversationIdOf, envelope, userObject, type Delivery, type EnvelopeContext } from "./webhook-types";

export interface CallEventOptions {
  ctx: EnvelopeContext;
  /** Display name of a uid (occupants carry names, not uids). Default: the uid. */
  nameOf?: (uid: string) => string;
  /** Time fields in milliseconds. Default: a deterministic ~20% of sessions, because the
   * platform mixes seconds and milliseconds across events. */
  millis?: boolean;
}

const SDKS = [["javascript", "web"], ["android", "android"], ["ios", "ios"]] as const;

export function usesMillis(sessionId: string, o: CallEventOptions): boolean {
  return o.millis ?? hashString(`ms:${sessionId}`) % 5 === 0;
}

function family(call: CallRecord): { prefix: "call" | "meeting"; type: "call" | "meet" } {
  return call.mode === "call" ? { prefix: "call", type: "call" } : { prefix: "meeting", type: "meet" };
}

function time(call: CallRecord, o: CallEventOptions, seconds: number): number {
  return usesMillis(call.sessionId, o) ? seconds * 1000 + (hashString(`${call.sessionId}${seconds}`) % 1000) : seconds;
}

const nameFn = (o: CallEventOptions) => o.nameOf ?? ((uid: string) => uid);

function occupant(call: CallRecord, p: CallParticipant, o: CallEventOptions, withLeft: boolean): JsonObject {
  const out: JsonObject = { joined_at: time(call, o, p.joinedAt ?? call.startedAt ?? call.initiatedAt) };
  if (withLeft) out.left_at = time(call, o, p.leftAt ?? call.endedAt ?? call.initiatedAt);
  out.audio_call = call.type === "audio" ? "true" : "false";
  out.name = nameFn(o)(p.uid);
  return out;
}

export function callInitiated(call: CallRecord, o: CallEventOptions): Delivery {
  const rng = mulberry32(mix(hashString(call.sessionId), 1));
  const name = nameFn(o);
  const at = call.initiatedAt;
  const forEntity = call.receiverType === "user"
    ? { entity: userObject(call.receiver, name(call.receiver), at), entityType: "user" }
    : { entity: { guid: call.receiver, name: call.receiver, type: "public", membersCount: 0, conversationId: `group_${call.receiver}` }, entityType: "group" };
  const message: JsonObject = {
    id: String(1_000_000 + (hashString(call.sessionId) % 9_000_000)),
    conversationId: conversationIdOf(call.initiator, call.receiver, call.receiverType),
    sender: call.initiator,
    receiverType: call.receiverType,
    receiver: call.receiver,
    category: "call",
    type: call.type,
    data: {
      action: "initiated",
      entities: {
        by: { entity: userObject(call.initiator, name(call.initiator), at), entityType: "user" },
        for: forEntity,
        on: {
          entity: { sessionid: call.sessionId, status: "initiated", type: call.type, receiverType: call.receiverType, initiatedAt: at, joinedAt: at, initiator: call.initiator, receiver: call.receiver },
          entityType: "call",
        },
      },
      resource: `WEB-4_0_10-${hex(rng, 8)}-${at * 1000}`,
    },
    sentAt: at,
    updatedAt: at,
  };
  // The trigger table gives no top-level `type` for call_initiated (only for the rest).
  return envelope(o.ctx, "call_initiated", { call: message }, at, undefined, call.sessionId);
}

export function callStarted(call: CallRecord, o: CallEventOptions): Delivery {
  const f = family(call);
  const at = call.startedAt ?? call.initiatedAt;
  return envelope(o.ctx, `${f.prefix}_started`, { created_at: time(call, o, at), sessionId: call.sessionId }, at, f.type, call.sessionId);
}

export function participantJoined(call: CallRecord, p: CallParticipant, o: CallEventOptions): Delivery {
  const f = family(call);
  const [sdk, platform] = SDKS[hashString(`${p.uid}${p.deviceId ?? ""}`) % SDKS.length];
  const initial: JsonObject = {
    is_video_muted: "false",
    start_recording_on_call_start: call.hasRecording ? "true" : "false",
    is_audio_muted: "false",
    is_audio_only: call.type === "audio" ? "true" : "false",
    call_version: "v2",
    sdk,
    mode: call.mode === "presenter" ? "SPOTLIGHT" : "DEFAULT",
    platform,
  };
  const at = p.joinedAt ?? call.startedAt ?? call.initiatedAt;
  return envelope(o.ctx, `${f.prefix}_participant_joined`, { occupant: occupant(call, p, o, false), initial_config: initial, sessionId: call.sessionId }, at, f.type, call.sessionId);
}

export function participantLeft(call: CallRecord, p: CallParticipant, o: CallEventOptions): Delivery {
  const f = family(call);
  const at = p.leftAt ?? call.endedAt ?? call.initiatedAt;
  return envelope(o.ctx, `${f.prefix}_participant_left`, { occupant: occupant(call, p, o, true), sessionId: call.sessionId }, at, f.type, call.sessionId);
}

export function callEnded(call: CallRecord, o: CallEventOptions): Delivery {
  const f = family(call);
  const at = call.endedAt ?? call.initiatedAt;
  const all = call.participants.filter((p) => p.isJoined).map((p) => occupant(call, p, o, true));
  // A call that never started reports its initiation as created_at.
  const data: JsonObject = { all_occupants: all, destroyed_at: time(call, o, at), created_at: time(call, o, call.startedAt ?? call.initiatedAt), sessionId: call.sessionId };
  return envelope(o.ctx, `${f.prefix}_ended`, data, at, f.type, call.sessionId);
}

/** recording_generated: duration is the recorded length in SECONDS as a decimal string,
 * startTime the call start in epoch seconds as a string. */
export function recordingGenerated(call: CallRecord, o: CallEventOptions): Delivery {
  const start = call.startedAt ?? call.initiatedAt;
  const end = call.endedAt ?? start;
  const centis = hashString(`rec:${call.sessionId}`) % 100;
  const at = end + 30 + (hashString(call.sessionId) % 600);
  const data: JsonObject = {
    recordingDate: new Date(start * 1000).toISOString().slice(0, 10),
    duration: `${Math.max(0, end - start)}.${String(centis).padStart(2, "0")}`,
    startTime: String(start),
    sessionId: call.sessionId,
    recording_url: `https://recordings.example.com/${encodeURIComponent(o.ctx.appId)}/${encodeURIComponent(call.sessionId)}.mp4`,
  };
  return envelope(o.ctx, "recording_generated", data, at, undefined, call.sessionId);
}

/** Every event one call produces, in natural time order: initiated, started, joins and
 * leaves, ended, and recording_generated when it has a recording. A call that never
 * started sends initiated and ended (with no occupants); an ongoing one stops at joins. */
export function callLifecycle(call: CallRecord, o: CallEventOptions): Delivery[] {
  const out: Delivery[] = [callInitiated(call, o)];
  if (call.startedAt !== undefined) {
    out.push(callStarted(call, o));
    for (const p of call.participants) if (p.isJoined) out.push(participantJoined(call, p, o));
    for (const p of call.participants) if (p.isJoined && p.leftAt !== undefined) out.push(participantLeft(call, p, o));
  }
  if (call.status !== "ongoing") out.push(callEnded(call, o));
  if (call.hasRecording) out.push(recordingGenerated(call, o));
  // Stable sort keeps started before a join at the same second.
  return out.sort((a, b) => a.at - b.at);
}
