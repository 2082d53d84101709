import { z } from "zod";
import {
  Bad, describe, durationText, plainHms, round6, toArray, toBool, toEpoch, toHms, toId, toInt, toLabel, toMinuteAmount, toMinutes, toNum, toStr,
} from "./field-coercers";

export { MAX_MINUTES, parseDurationSeconds } from "./field-coercers";

/**
 * Tolerant parsing of a Calls API record. The seed says numeric fields are "typed as
 * observed" (decimals, strings), `totalDuration` is `HH:MM:SS` on a call and decimal
 * minutes on a participant, `deviceId` is a string, and participants that never joined
 * lack joinedAt/leftAt/mid/deviceId. We accept all of that, keep unknown fields (the
 * caller stores the raw object), keep unknown enum values as strings, and reject a
 * record only when it has no usable identity (sessionId) or no start time.
 */

type Ctx = z.core.$RefinementCtx;

/** A field's coercer as zod: one `z.transform` ("accept anything, coerce, or report"). */
function field<T>(coerce: (v: unknown) => T | Bad) {
  return z.transform((v: unknown, ctx: Ctx): T => {
    const out = coerce(v);
    if (out instanceof Bad) {
      ctx.addIssue(out.message);
      return z.NEVER;
    }
    return out;
  });
}

type Coercer = (v: unknown) => unknown;
/** What a table of coercers yields: each field's value without the `Bad` case. */
type Coerced<F extends Record<string, Coercer>> = { [K in keyof F]: Exclude<ReturnType<F[K]>, Bad> };

/**
 * The fields the typed columns hold, each with its coercer. One table drives both the
 * zod schemas below and the direct pass in `coerceFields`, so the two cannot disagree.
 */
const PARTICIPANT_FIELDS = {
  uid: toId,
  state: toLabel,
  isJoined: toBool,
  totalAudioMinutes: toMinuteAmount,
  totalVideoMinutes: toMinuteAmount,
  totalDuration: toMinutes,
  deviceId: toStr,
  joinedAt: toEpoch,
  leftAt: toEpoch,
  mid: toStr,
} satisfies Record<string, Coercer>;

const CALL_FIELDS = {
  sessionId: toId,
  mid: toStr,
  type: toLabel,
  mode: toLabel,
  status: toLabel,
  initiator: toStr,
  receiver: toStr,
  receiverType: toLabel,
  initiatedAt: toEpoch,
  startedAt: toEpoch,
  endedAt: toEpoch,
  hasRecording: toBool,
  totalAudioMinutes: toMinuteAmount,
  totalVideoMinutes: toMinuteAmount,
  totalDurationInMinutes: toMinuteAmount,
  totalDuration: toHms,
  totalParticipants: toInt,
  participants: toArray,
} satisfies Record<string, Coercer>;

function schemaOf<F extends Record<string, Coercer>>(fields: F) {
  return z.looseObject(Object.fromEntries(Object.entries(fields).map(([k, c]) => [k, field(c)])) as unknown as { [K in keyof F]: z.ZodType<Coerced<F>[K]> });
}

/**
 * The record's schemas (unknown keys pass through). A backfill parses millions of
 * records, so valid ones take `coerceFields` — the same coercers applied directly,
 * about 5x cheaper than zod's object machinery — and zod runs only on a record that
 * failed, to report its issues with paths.
 */
export const participantSchema = schemaOf(PARTICIPANT_FIELDS);
export const callSchema = schemaOf(CALL_FIELDS);

const PARTICIPANT_KEYS = Object.keys(PARTICIPANT_FIELDS) as Array<keyof typeof PARTICIPANT_FIELDS>;
const CALL_KEYS = Object.keys(CALL_FIELDS) as Array<keyof typeof CALL_FIELDS>;

/** Every field coerced, or undefined at the first one that does not coerce. */
export function coerceFields<F extends Record<string, Coercer>>(fields: F, keys: Array<keyof F>, input: Record<string, unknown>): Coerced<F> | undefined {
  const out = {} as Coerced<F>;
  for (const k of keys) {
    const v = fields[k]!(input[k as string]);
    if (v instanceof Bad) return undefined;
    out[k] = v as Coerced<F>[typeof k];
  }
  return out;
}

type CoercedCall = Coerced<typeof CALL_FIELDS>;
type CoercedParticipant = Coerced<typeof PARTICIPANT_FIELDS>;

/**
 * `coerceFields(CALL_FIELDS, …)` written out field by field: a backfill runs it a million
 * times, and named property reads on the parsed objects (which share one shape) are
 * several times cheaper than the table's keyed reads and writes. The same coercers,
 * in the same order; a test checks both give the same answer for every quirk.
 */
function coerceCall(o: Record<string, unknown>): CoercedCall | undefined {
  const sessionId = toId(o.sessionId);
  if (sessionId instanceof Bad) return undefined;
  const mid = toStr(o.mid);
  if (mid instanceof Bad) return undefined;
  const type = toLabel(o.type);
  if (type instanceof Bad) return undefined;
  const mode = toLabel(o.mode);
  if (mode instanceof Bad) return undefined;
  const status = toLabel(o.status);
  if (status instanceof Bad) return undefined;
  const initiator = toStr(o.initiator);
  if (initiator instanceof Bad) return undefined;
  const receiver = toStr(o.receiver);
  if (receiver instanceof Bad) return undefined;
  const receiverType = toLabel(o.receiverType);
  if (receiverType instanceof Bad) return undefined;
  const initiatedAt = toEpoch(o.initiatedAt);
  if (initiatedAt instanceof Bad) return undefined;
  const startedAt = toEpoch(o.startedAt);
  if (startedAt instanceof Bad) return undefined;
  const endedAt = toEpoch(o.endedAt);
  if (endedAt instanceof Bad) return undefined;
  const hasRecording = toBool(o.hasRecording);
  if (hasRecording instanceof Bad) return undefined;
  const totalAudioMinutes = toMinuteAmount(o.totalAudioMinutes);
  if (totalAudioMinutes instanceof Bad) return undefined;
  const totalVideoMinutes = toMinuteAmount(o.totalVideoMinutes);
  if (totalVideoMinutes instanceof Bad) return undefined;
  const totalDurationInMinutes = toMinuteAmount(o.totalDurationInMinutes);
  if (totalDurationInMinutes instanceof Bad) return undefined;
  const totalDuration = toHms(o.totalDuration);
  if (totalDuration instanceof Bad) return undefined;
  const totalParticipants = toInt(o.totalParticipants);
  if (totalParticipants instanceof Bad) return undefined;
  const participants = toArray(o.participants);
  if (participants instanceof Bad) return undefined;
  return {
    sessionId, mid, type, mode, status, initiator, receiver, receiverType, initiatedAt, startedAt, endedAt, hasRecording,
    totalAudioMinutes, totalVideoMinutes, totalDurationInMinutes, totalDuration, totalParticipants, participants,
  };
}

/** `coerceFields(PARTICIPANT_FIELDS, …)` written out (see coerceCall). */
function coerceParticipant(o: Record<string, unknown>): CoercedParticipant | undefined {
  const uid = toId(o.uid);
  if (uid instanceof Bad) return undefined;
  const state = toLabel(o.state);
  if (state instanceof Bad) return undefined;
  const isJoined = toBool(o.isJoined);
  if (isJoined instanceof Bad) return undefined;
  const totalAudioMinutes = toMinuteAmount(o.totalAudioMinutes);
  if (totalAudioMinutes instanceof Bad) return undefined;
  const totalVideoMinutes = toMinuteAmount(o.totalVideoMinutes);
  if (totalVideoMinutes instanceof Bad) return undefined;
  const totalDuration = toMinutes(o.totalDuration);
  if (totalDuration instanceof Bad) return undefined;
  const deviceId = toStr(o.deviceId);
  if (deviceId instanceof Bad) return undefined;
  const joinedAt = toEpoch(o.joinedAt);
  if (joinedAt instanceof Bad) return undefined;
  const leftAt = toEpoch(o.leftAt);
  if (leftAt instanceof Bad) return undefined;
  const mid = toStr(o.mid);
  if (mid instanceof Bad) return undefined;
  return { uid, state, isJoined, totalAudioMinutes, totalVideoMinutes, totalDuration, deviceId, joinedAt, leftAt, mid };
}

/** For tests: the written-out coercion and the table's, side by side. */
export const coercionForTests = { coerceCall, coerceParticipant, CALL_FIELDS, CALL_KEYS, PARTICIPANT_FIELDS, PARTICIPANT_KEYS, plainHms, durationText };

export interface ParsedParticipant {
  /** Position in the platform's list: the same uid may appear twice. */
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
}

export interface ParsedCall {
  sessionId: string;
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
  /** startedAt ?? initiatedAt: the time every filter uses. */
  startAt: number;
  hasRecording: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  durationSeconds: number;
  totalParticipants: number;
  participants: ParsedParticipant[];
}

export type CallParseResult =
  | { ok: true; call: ParsedCall; raw: Record<string, unknown> }
  | { ok: false; sessionId: string | null; reason: string };

function rawSessionId(input: unknown): string | null {
  if (!input || typeof input !== "object") return null;
  const id = (input as { sessionId?: unknown }).sessionId;
  if (typeof id === "string" && id.trim() !== "") return id.trim();
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  return null;
}

function formatIssues(error: z.ZodError, prefix = ""): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${prefix}${i.path.length ? i.path.join(".") : "record"}: ${i.message}`)
    .join("; ");
}

/**
 * The coercers and the rounding, for the sync's direct reading of a record into its write
 * row (lib/sync/write-row.ts), which must apply exactly these rules.
 */
export { Bad, round6, toArray, toBool, toEpoch, toHms, toId, toInt, toLabel, toMinuteAmount, toMinutes, toNum, toStr };

export function parseCallRecord(input: unknown): CallParseResult {
  if (!input || typeof input !== "object" || Array.isArray(input)) {
    return { ok: false, sessionId: null, reason: `record: expected an object, got ${describe(input)}` };
  }
  const r = coerceCall(input as Record<string, unknown>);
  if (!r) {
    const result = callSchema.safeParse(input);
    const reason = result.success ? "record: rejected" : formatIssues(result.error);
    return { ok: false, sessionId: rawSessionId(input), reason };
  }
  const parts: CoercedParticipant[] = [];
  for (let i = 0; i < r.participants.length; i++) {
    const p = r.participants[i];
    if (!p || typeof p !== "object" || Array.isArray(p)) {
      return { ok: false, sessionId: r.sessionId, reason: `participants.${i}: expected an object, got ${describe(p)}` };
    }
    const pr = coerceParticipant(p as Record<string, unknown>);
    if (!pr) {
      // zod words the issue (the direct pass only knows that a field did not coerce).
      const result = participantSchema.safeParse(p);
      const reason = result.success ? `participants.${i}: rejected` : formatIssues(result.error, `participants.${i}.`);
      return { ok: false, sessionId: r.sessionId, reason };
    }
    parts.push(pr);
  }
  const initiatedAt = r.initiatedAt ?? null;
  const startedAt = r.startedAt ?? null;
  const endedAt = r.endedAt ?? null;
  const startAt = startedAt ?? initiatedAt;
  if (startAt === null) {
    return { ok: false, sessionId: r.sessionId, reason: "startedAt/initiatedAt: a call needs at least one start time, both missing" };
  }
  const participants: ParsedParticipant[] = parts.map((p, seq) => {
    const joinedAt = p.joinedAt ?? null;
    const audio = p.totalAudioMinutes ?? 0;
    const video = p.totalVideoMinutes ?? 0;
    return {
      seq,
      uid: p.uid as string,
      state: p.state ?? null,
      isJoined: p.isJoined ?? joinedAt !== null,
      totalAudioMinutes: audio,
      totalVideoMinutes: video,
      totalDurationMinutes: p.totalDuration ?? round6(audio + video),
      deviceId: p.deviceId ?? null,
      joinedAt,
      leftAt: p.leftAt ?? null,
      mid: p.mid ?? null,
    };
  });
  const inMinutes = r.totalDurationInMinutes ?? null;
  const durationSeconds =
    r.totalDuration ??
    (inMinutes !== null
      ? Math.round(inMinutes * 60)
      : startedAt !== null && endedAt !== null && endedAt >= startedAt
        ? endedAt - startedAt
        : 0);
  const call: ParsedCall = {
    sessionId: r.sessionId,
    mid: r.mid ?? null,
    type: r.type ?? null,
    mode: r.mode ?? null,
    status: r.status ?? null,
    initiator: r.initiator ?? null,
    receiver: r.receiver ?? null,
    receiverType: r.receiverType ?? null,
    initiatedAt,
    startedAt,
    endedAt,
    startAt,
    hasRecording: r.hasRecording ?? false,
    totalAudioMinutes: r.totalAudioMinutes ?? 0,
    totalVideoMinutes: r.totalVideoMinutes ?? 0,
    totalDurationMinutes: inMinutes ?? round6(durationSeconds / 60),
    durationSeconds,
    totalParticipants: r.totalParticipants ?? participants.filter((p) => p.isJoined).length,
    participants,
  };
  return { ok: true, call, raw: input as Record<string, unknown> };
}
