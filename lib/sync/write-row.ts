import { Bad, round6, toArray, toBool, toEpoch, toHms, toId, toInt, toLabel, toMinuteAmount, toMinutes, toStr } from "@/lib/platform/call-record";
import type { CallFields, ParticipantFields } from "@/lib/platform/page-reader";
import { W, type WriteRow } from "./pending-rows";

/**
 * A record read by its known fields (page-reader.ts) straight into the flat row the
 * SQLite writer binds (`toWriteRow`'s layout), with no ParsedCall in between: the same
 * coercers and the same defaults as `parseCallRecord` followed by `toWriteRow`, without
 * the objects made there only to be copied into the row (the coerced and the parsed call,
 * each participant twice, their lists, the result and the PendingCall: the sync thread
 * reads a million records a backfill; decision 0026). undefined when any field does not
 * coerce or the call has no start time: the caller then takes `parseCallRecord`'s way,
 * which words the reason. The row's hash (W.hash) is left null for the caller.
 * lib/sync/write-row.test.ts holds it to `toWriteRow(parseCallRecord(...))` value for value.
 */
export function fieldsRow(o: CallFields, participantExtras: Array<string | null>, rawStart: number, rawEnd: number): WriteRow | undefined {
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
  const audio = toMinuteAmount(o.totalAudioMinutes);
  if (audio instanceof Bad) return undefined;
  const video = toMinuteAmount(o.totalVideoMinutes);
  if (video instanceof Bad) return undefined;
  const inMinutes = toMinuteAmount(o.totalDurationInMinutes);
  if (inMinutes instanceof Bad) return undefined;
  const hms = toHms(o.totalDuration);
  if (hms instanceof Bad) return undefined;
  const totalParticipants = toInt(o.totalParticipants);
  if (totalParticipants instanceof Bad) return undefined;
  const participants = toArray(o.participants);
  if (participants instanceof Bad) return undefined;
  const startAt = startedAt ?? initiatedAt;
  if (startAt === null) return undefined;
  const durationSeconds =
    hms ?? (inMinutes !== null ? Math.round(inMinutes * 60) : startedAt !== null && endedAt !== null && endedAt >= startedAt ? endedAt - startedAt : 0);
  const n = participants.length;
  const row: WriteRow = [
    sessionId, mid, type, mode, status, initiator, receiver, receiverType, initiatedAt, startedAt, endedAt, startAt,
    hasRecording === true ? 1 : 0, audio ?? 0, video ?? 0, inMinutes ?? round6(durationSeconds / 60), durationSeconds,
    totalParticipants, null, rawStart, rawEnd, n,
  ];
  let joined = 0;
  for (let seq = 0; seq < n; seq++) {
    const p = participants[seq] as ParticipantFields;
    if (!p || typeof p !== "object" || Array.isArray(p)) return undefined;
    const uid = toId(p.uid);
    if (uid instanceof Bad) return undefined;
    const state = toLabel(p.state);
    if (state instanceof Bad) return undefined;
    const isJoinedSent = toBool(p.isJoined);
    if (isJoinedSent instanceof Bad) return undefined;
    const pAudio = toMinuteAmount(p.totalAudioMinutes);
    if (pAudio instanceof Bad) return undefined;
    const pVideo = toMinuteAmount(p.totalVideoMinutes);
    if (pVideo instanceof Bad) return undefined;
    const minutes = toMinutes(p.totalDuration);
    if (minutes instanceof Bad) return undefined;
    const deviceId = toStr(p.deviceId);
    if (deviceId instanceof Bad) return undefined;
    const joinedAt = toEpoch(p.joinedAt);
    if (joinedAt instanceof Bad) return undefined;
    const leftAt = toEpoch(p.leftAt);
    if (leftAt instanceof Bad) return undefined;
    const pMid = toStr(p.mid);
    if (pMid instanceof Bad) return undefined;
    const a = pAudio ?? 0;
    const v = pVideo ?? 0;
    const isJoined = isJoinedSent ?? joinedAt !== null;
    if (isJoined) joined++;
    row.push(seq, uid, state, isJoined ? 1 : 0, a, v, minutes ?? round6(a + v), deviceId, joinedAt, leftAt, pMid, participantExtras[seq] ?? null);
  }
  if (totalParticipants === null) row[W.totalParticipants] = joined;
  return row;
}
