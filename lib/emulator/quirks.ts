// The platform's observed wire quirks ("numeric fields observed as decimals or strings",
// undeclared extra keys), reproduced on a deterministic subset of records chosen by a
// hash of the sessionId, so the same record always looks the same on every page.
import { DATA_MIXES, type DataMix } from "./mixes";
import { hashString } from "./prng";
import { serializeCall } from "./serialize";
import type { CallRecord, JsonObject, WireCall } from "./types";

const CALL_NUMERIC = ["initiatedAt", "startedAt", "endedAt", "totalAudioMinutes", "totalVideoMinutes", "totalDurationInMinutes", "totalParticipants"] as const;
const PARTICIPANT_NUMERIC = ["joinedAt", "leftAt", "totalDuration", "totalAudioMinutes"] as const;
/** Integer fields that the decimal quirk rewrites as "1700000000.0" in the JSON text. */
const DECIMAL_FIELDS = /"(initiatedAt|startedAt|endedAt|totalParticipants|joinedAt|leftAt)":(\d+)(?=[,}])/g;

const EXTRA_CALL = (rec: CallRecord): JsonObject => ({ region: rec.sessionId.split(".")[1] ?? "us", tags: ["beta", "sdk-4"] });
const EXTRA_PARTICIPANT = (): JsonObject => ({ platform: "android", extra: { network: "wifi" } });
const rawKeys = (o: JsonObject): string => JSON.stringify(o).slice(1, -1);

export type QuirkKind = "strings" | "decimals" | "extra" | "none";

/** Which quirk a record gets: the mix's share of string records, 3% decimals, then the mix's share with extra keys. */
export function quirkOf(sessionId: string, shape: DataMix = DATA_MIXES.standard): QuirkKind {
  const k = hashString(sessionId) % 100;
  if (k < shape.stringsPercent) return "strings";
  if (k < shape.stringsPercent + 3) return "decimals";
  if (k < shape.stringsPercent + 3 + shape.extraPercent) return "extra";
  return "none";
}

/** Kinds of deliberately unparseable records served with the invalidRecords switch. */
export type InvalidKind = "missingSessionId" | "typeObject" | "participantsString";
export const INVALID_KINDS: readonly InvalidKind[] = ["missingSessionId", "typeObject", "participantsString"];

function plain(rec: CallRecord): JsonObject {
  // CallRecord is JSON-safe by construction (no undefined values are ever assigned).
  return rec as unknown as JsonObject;
}

export function toWire(rec: CallRecord, invalid?: InvalidKind, shape?: DataMix): WireCall {
  const kind = quirkOf(rec.sessionId, shape);
  let out: JsonObject = plain(rec);
  if (kind === "strings") {
    out = { ...out };
    for (const f of CALL_NUMERIC) if (typeof out[f] === "number") out[f] = String(out[f]);
    out.participants = rec.participants.map((p, i) => {
      if (i % 2 === 1) return plain(p as unknown as CallRecord);
      const q: JsonObject = { ...(p as unknown as JsonObject) };
      for (const f of PARTICIPANT_NUMERIC) if (typeof q[f] === "number") q[f] = String(q[f]);
      return q;
    });
  } else if (kind === "extra") {
    out = { ...out, ...EXTRA_CALL(rec) };
    out.participants = rec.participants.map((p, i) => {
      const q = p as unknown as JsonObject;
      return i === 0 ? { ...q, ...EXTRA_PARTICIPANT() } : q;
    });
  }
  if (invalid === undefined) return out;
  const broken: JsonObject = { ...out };
  if (invalid === "missingSessionId") delete broken.sessionId;
  else if (invalid === "typeObject") broken.type = { value: rec.type };
  else broken.participants = JSON.stringify(rec.participants).slice(0, 40);
  return broken;
}

/** JSON text of one wire record. Integers-as-decimals can only exist in text, so that
 * quirk is applied here rather than in toWire. */
export function serializeWire(wire: WireCall, shape?: DataMix): string {
  const text = JSON.stringify(wire);
  const sid = wire.sessionId;
  if (typeof sid === "string" && quirkOf(sid, shape) === "decimals") return text.replace(DECIMAL_FIELDS, '"$1":$2.0');
  return text;
}

/** JSON text of a record as served: the same as serializeWire(toWire(rec, invalid)), with
 * a fast path for the common case of a record without object-level quirks. */
export function serializeServed(rec: CallRecord, invalid?: InvalidKind, shape?: DataMix): string {
  const kind = quirkOf(rec.sessionId, shape);
  if (invalid !== undefined || kind === "strings") return serializeWire(toWire(rec, invalid, shape), shape);
  if (kind === "extra") return serializeCall(rec, `,${rawKeys(EXTRA_CALL(rec))}`, rec.participants.length > 0 ? `,${rawKeys(EXTRA_PARTICIPANT())}` : "");
  const text = serializeCall(rec);
  return kind === "decimals" ? text.replace(DECIMAL_FIELDS, '"$1":$2.0') : text;
}

const toNum = (v: JsonObject[string] | undefined): number | undefined => {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
};

/** Undoes the wire quirks (numeric strings, extra keys) so that a record read back from
 * the list or the truth endpoint can feed the webhook builders. Returns undefined for a
 * deliberately invalid record. */
export function canonicalFromWire(w: WireCall): CallRecord | undefined {
  if (typeof w.sessionId !== "string" || typeof w.type !== "string" || !Array.isArray(w.participants)) return undefined;
  const rec = {
    sessionId: w.sessionId, mid: String(w.mid), type: w.type, mode: String(w.mode), status: String(w.status),
    initiator: String(w.initiator), receiver: String(w.receiver), receiverType: String(w.receiverType), initiatedAt: toNum(w.initiatedAt) ?? 0,
  } as CallRecord;
  const started = toNum(w.startedAt);
  const ended = toNum(w.endedAt);
  if (started !== undefined) rec.startedAt = started;
  if (ended !== undefined) rec.endedAt = ended;
  rec.hasRecording = w.hasRecording === true;
  rec.totalAudioMinutes = toNum(w.totalAudioMinutes) ?? 0;
  rec.totalVideoMinutes = toNum(w.totalVideoMinutes) ?? 0;
  rec.totalDurationInMinutes = toNum(w.totalDurationInMinutes) ?? 0;
  rec.totalDuration = String(w.totalDuration);
  rec.totalParticipants = toNum(w.totalParticipants) ?? 0;
  rec.participants = w.participants.filter((p): p is JsonObject => typeof p === "object" && p !== null && !Array.isArray(p)).map((p) => {
    const out: CallRecord["participants"][number] = {
      uid: String(p.uid), state: String(p.state), isJoined: p.isJoined === true,
      totalAudioMinutes: toNum(p.totalAudioMinutes) ?? 0, totalVideoMinutes: toNum(p.totalVideoMinutes) ?? 0, totalDuration: toNum(p.totalDuration) ?? 0,
    };
    if (typeof p.deviceId === "string") out.deviceId = p.deviceId;
    const j = toNum(p.joinedAt);
    const l = toNum(p.leftAt);
    if (j !== undefined) out.joinedAt = j;
    if (l !== undefined) out.leftAt = l;
    if (typeof p.mid === "string") out.mid = p.mid;
    return out;
  });
  return rec;
}
