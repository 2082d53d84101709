import { z } from "zod";

/**
 * Tolerant parsing of a Calls API record. The seed says numeric fields are "typed as
 * observed" (decimals, strings), `totalDuration` is `HH:MM:SS` on a call and decimal
 * minutes on a participant, `deviceId` is a string, and participants that never joined
 * lack joinedAt/leftAt/mid/deviceId. We accept all of that, keep unknown fields (the
 * caller stores the raw object), keep unknown enum values as strings, and reject a
 * record only when it has no usable identity (sessionId) or no start time.
 */

type Ctx = z.core.$RefinementCtx;

const describe = (v: unknown): string => {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null || typeof v !== "object") return String(v);
  return Array.isArray(v) ? "an array" : "an object";
};

const isAbsent = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

function toNumber(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string") {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/**
 * Each field is one coercer: it returns the value or a `Bad` with the message. In the zod
 * schemas each becomes one `z.transform` ("accept anything, coerce, or report").
 */
class Bad {
  constructor(readonly message: string) {}
}

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

/** A decimal that may arrive as a string; absent → null. */
function toNum(v: unknown): number | null | Bad {
  if (isAbsent(v)) return null;
  const n = toNumber(v);
  return n === undefined ? new Bad(`expected a number, got ${describe(v)}`) : n;
}

/**
 * The most minutes one field of one record may hold: 100 million (about 190 years, far
 * beyond any call or any meeting's participant-minutes). Past it, or below zero, or not
 * finite, the value is impossible: the record is refused (the sync run lists it among its
 * skipped records with this reason), because a negative amount would cancel real minutes
 * in every sum and statement, and a huge one would swamp every total and chart.
 */
export const MAX_MINUTES = 100_000_000;

const outOfRange = (v: unknown) => new Bad(`expected minutes from 0 to ${MAX_MINUTES.toLocaleString("en-US")}, got ${describe(v)}`);

/** Decimal minutes (audio, video, total) that may arrive as a string; absent → null; impossible → Bad. */
function toMinuteAmount(v: unknown): number | null | Bad {
  const n = toNum(v);
  if (typeof n !== "number") return n;
  return n >= 0 && n <= MAX_MINUTES ? n : outOfRange(v);
}

/** An integer that may arrive as a string or a decimal ("1700000000", 1700000000.0). */
function toInt(v: unknown): number | null | Bad {
  const n = toNum(v);
  return typeof n === "number" ? Math.trunc(n) : n;
}

/** Epoch seconds; 0 and negatives mean "not set" (never a real call time). */
function toEpoch(v: unknown): number | null | Bad {
  const n = toInt(v);
  return typeof n === "number" && n <= 0 ? null : n;
}

function toBool(v: unknown): boolean | null | Bad {
  if (v === undefined || v === null || v === "") return null;
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true" || s === "1" || s === "yes") return true;
    if (s === "false" || s === "0" || s === "no") return false;
  }
  return new Bad(`expected a boolean, got ${describe(v)}`);
}

/** A string; numbers are accepted and turned into strings (deviceId, ids). */
function toStr(v: unknown): string | null | Bad {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return new Bad(`expected a string, got ${describe(v)}`);
}

/** Enum-like values (type, mode, status, state): kept as sent, trimmed, so new values survive. */
function toLabel(v: unknown): string | null | Bad {
  const s = toStr(v);
  if (typeof s !== "string") return s;
  const t = s.trim();
  return t === "" ? null : t;
}

function toId(v: unknown): string | Bad {
  const s = toStr(v);
  if (s instanceof Bad) return s;
  const t = s?.trim();
  if (!t) return new Bad(s === null ? "missing" : "empty");
  return t;
}

const digitAt = (s: string, i: number) => {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
};

/**
 * The platform's own form, `H:MM:SS` with 1–9 digits of hours and nothing else, read
 * digit by digit: a backfill reads a million of them, and the general reading below
 * (split, a pattern per part) cost about 2 µs each. undefined for any other form, which
 * the general reading then decides; a test checks both agree on every form.
 */
function plainHms(s: string): number | undefined {
  const n = s.length;
  if (n < 7 || n > 15 || s.charCodeAt(n - 3) !== 58 || s.charCodeAt(n - 6) !== 58) return undefined;
  let hours = 0;
  for (let i = 0; i < n - 6; i++) {
    const d = digitAt(s, i);
    if (d < 0) return undefined;
    hours = hours * 10 + d;
  }
  const m1 = digitAt(s, n - 5), m2 = digitAt(s, n - 4), s1 = digitAt(s, n - 2), s2 = digitAt(s, n - 1);
  if (m1 < 0 || m2 < 0 || s1 < 0 || s2 < 0 || m1 > 5 || s1 > 5) return undefined;
  return hours * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2;
}

/** `HH:MM:SS` (hours may exceed 24), `MM:SS`, or a plain number of seconds → seconds. */
export function parseDurationSeconds(v: unknown): number | null | undefined {
  if (isAbsent(v)) return null;
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;
  if (typeof v !== "string") return undefined;
  return plainHms(v) ?? durationText(v);
}

/** Any string form parseDurationSeconds takes, → seconds (undefined: not a duration). */
function durationText(v: string): number | undefined {
  const s = v.trim();
  if (!s.includes(":")) {
    const n = Number(s);
    return Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;
  }
  const parts = s.split(":");
  if (parts.length > 3) return undefined;
  let total = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (!/^\d+(\.\d+)?$/.test(p)) return undefined;
    const n = Number(p);
    // Minutes and seconds below the leading unit must be < 60.
    if (i > 0 && n >= 60) return undefined;
    total = total * 60 + n;
  }
  return Math.round(total);
}

function toHms(v: unknown): number | null | Bad {
  const s = parseDurationSeconds(v);
  if (s === undefined) return new Bad(`expected HH:MM:SS, MM:SS or seconds, got ${describe(v)}`);
  return s !== null && s > MAX_MINUTES * 60 ? new Bad(`expected a duration of at most ${MAX_MINUTES.toLocaleString("en-US")} minutes, got ${describe(v)}`) : s;
}

/** Decimal minutes on a participant; an `HH:MM:SS` string is tolerated too. */
function toMinutes(v: unknown): number | null | Bad {
  if (isAbsent(v)) return null;
  if (typeof v === "string" && v.includes(":")) {
    const s = parseDurationSeconds(v);
    if (s !== undefined && s !== null) return s <= MAX_MINUTES * 60 ? s / 60 : outOfRange(v);
  } else {
    const n = toNumber(v);
    if (n !== undefined) return n >= 0 && n <= MAX_MINUTES ? n : outOfRange(v);
  }
  return new Bad(`expected decimal minutes, got ${describe(v)}`);
}

function toArray(v: unknown): unknown[] | Bad {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : new Bad(`expected an array, got ${describe(v)}`);
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

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

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
