// Deterministic, realistic call records. A record is a pure function of
// (seed, appId, slot, now, months), so the server can rebuild any record on demand and
// never hold a million objects (see store.ts).
import { DATA_MIXES, type DataMix, type DataMixName } from "./mixes";
import { buildPopulation, type Population } from "./population";
import { hashString, int, logNormal, mix, mulberry32, uuidLike, type Rng } from "./prng";
import { toWire } from "./quirks";
import { randomSessionId, timeSessionId, type SessionIdOrder } from "./session-ids";
import type { CallMode, CallParticipant, CallRecord, CallStatus, CallType, Region, WireCall } from "./types";

const DAY = 86_400;
const MONTH = 30 * DAY;
// Relative call volume per local hour: office hours dominate, nights are near-empty.
const HOUR_WEIGHT = [0.03, 0.02, 0.02, 0.02, 0.03, 0.05, 0.08, 0.2, 0.55, 1, 1, 0.95, 0.6, 0.9, 1, 0.95, 0.85, 0.55, 0.3, 0.15, 0.12, 0.08, 0.05, 0.04];

export interface AppGenParams {
  appId: string;
  seed: number;
  /** Number of calls generated up front. */
  count: number;
  /** Epoch seconds; the newest generated call is a few minutes before it. */
  now: number;
  /** How far back (30-day months) the history reaches. */
  months: number;
  region?: Region;
  /** Largest meeting (members who join, initiator included; default 12). The bench
   * lowers it to get the issues' "about 3 participant rows per call". */
  maxMeetingSize?: number;
  /** The shape of the app's data (lib/emulator/mixes.ts; default "standard"). */
  mix?: DataMixName;
  /** Session ids that follow time (default) or random UUIDs (lib/emulator/session-ids.ts). */
  sessionIds?: SessionIdOrder;
}

export interface GenContext {
  appId: string;
  region: Region;
  seed: number;
  count: number;
  now: number;
  start: number;
  appSeed: number;
  tzOffsetHours: number;
  ongoingCount: number;
  maxMeetingSize: number;
  mix: DataMix;
  sessionIds: SessionIdOrder;
  pop: Population;
}

export function makeContext(p: AppGenParams): GenContext {
  const shape: DataMix = DATA_MIXES[p.mix ?? "standard"];
  const appSeed = mix(p.seed, hashString(p.appId));
  const count = Math.max(0, Math.floor(p.count));
  return {
    appId: p.appId,
    region: p.region ?? "us",
    seed: p.seed,
    count,
    now: Math.floor(p.now),
    start: Math.floor(p.now - Math.max(p.months, 0.05) * MONTH),
    appSeed,
    // Each tenant works in its own time zone so apps do not peak at the same UTC hour.
    tzOffsetHours: [-8, -5, 0, 1, 5, 9][appSeed % 6],
    ongoingCount: count >= 50 ? Math.min(4, 1 + Math.floor(count / 500)) : count >= 10 ? 1 : 0,
    maxMeetingSize: Math.max(3, Math.floor(p.maxMeetingSize ?? shape.meetingJoin[1])),
    mix: shape,
    sessionIds: p.sessionIds ?? "time",
    pop: buildPopulation(p.seed, p.appId, shape),
  };
}

function sampleTime(rng: Rng, ctx: GenContext, from: number, to: number): number {
  for (let i = 0; i < 64; i++) {
    const t = from + Math.floor(rng() * Math.max(1, to - from));
    const local = t + ctx.tzOffsetHours * 3600;
    const dow = (Math.floor(local / DAY) + 4) % 7; // 1970-01-01 was a Thursday
    const weight = (dow === 0 || dow === 6 ? 0.2 : 1) * HOUR_WEIGHT[Math.floor((local % DAY) / 3600)];
    if (rng() < weight) return t;
  }
  return from + Math.floor(rng() * Math.max(1, to - from));
}

/** "HH:MM:SS"; hours are not wrapped at 24 (the platform shows "26:03:09"). */
export function formatHms(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

export const round3 = (x: number): number => Math.round(x * 1000) / 1000;

export interface CallSpec {
  initiatedAt: number;
  status: CallStatus;
  /** Clock used to count minutes of an ongoing call. */
  clockNow: number;
  long: boolean;
}

/** Minutes rule: every joined second counts once, as video in a video call and as audio
 * in an audio call. Call totals are sums over participant rows; the call's own duration
 * is wall-clock (endedAt - startedAt). */
export function finishTotals(call: CallRecord, until: number): void {
  let audio = 0;
  let video = 0;
  let joined = 0;
  for (const p of call.participants) {
    if (!p.isJoined || p.joinedAt === undefined) continue;
    joined++;
    const secs = Math.max(0, (p.leftAt ?? until) - p.joinedAt);
    if (call.type === "video") video += secs;
    else audio += secs;
    p.totalDuration = round3(secs / 60);
    p.totalAudioMinutes = call.type === "audio" ? p.totalDuration : 0;
    p.totalVideoMinutes = call.type === "video" ? p.totalDuration : 0;
  }
  const wall = call.startedAt === undefined ? 0 : Math.max(0, (call.endedAt ?? until) - call.startedAt);
  call.totalAudioMinutes = round3(audio / 60);
  call.totalVideoMinutes = round3(video / 60);
  call.totalDurationInMinutes = round3(wall / 60);
  call.totalDuration = formatHms(wall);
  call.totalParticipants = joined;
}

function deviceId(rng: Rng): string {
  // Two small ints: string conversion of 10-digit doubles is measurably slower.
  return `${int(rng, 10_000, 99_999)}${String(int(rng, 0, 99_999)).padStart(5, "0")}`;
}

function joinedRow(rng: Rng, uid: string, joinedAt: number, leftAt: number | undefined): CallParticipant {
  const p: CallParticipant = { uid, state: leftAt === undefined ? "ongoing" : "ended", isJoined: true, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0, deviceId: deviceId(rng), joinedAt };
  if (leftAt !== undefined) p.leftAt = leftAt;
  p.mid = uuidLike(rng);
  return p;
}

function absentRow(uid: string, state: string): CallParticipant {
  return { uid, state, isJoined: false, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0 };
}

function durationSeconds(rng: Rng, mode: CallMode, long: boolean): number {
  if (long) return int(rng, 24 * 3600 + 60, 30 * 3600);
  if (mode === "call") return Math.round(Math.min(4 * 3600, Math.max(5, logNormal(rng, 240, 1))));
  if (mode === "meet") return Math.round(Math.min(8 * 3600, Math.max(60, logNormal(rng, 1800, 0.7))));
  return Math.round(Math.min(8 * 3600, Math.max(300, logNormal(rng, 2700, 0.5))));
}

/** Builds one call. Status and time are decided by the caller so that new calls can be
 * placed at the top of the list later (store.ts "advance"). */
export function buildCall(rng: Rng, ctx: GenContext, spec: CallSpec): CallRecord {
  const pop = ctx.pop;
  const r = rng();
  const shape = ctx.mix;
  const mode: CallMode = r < shape.callShare ? "call" : r < shape.callShare + shape.meetShare ? "meet" : "presenter";
  const audioShare = mode === "call" ? 0.65 : mode === "meet" ? 0.3 : 0.1;
  const type: CallType = rng() < audioShare ? "audio" : "video";
  let status = spec.status;
  // One-to-one calls get rejected; groups are at most unanswered (nobody came).
  if (mode !== "call" && status === "rejected") status = "unanswered";
  const { initiatedAt } = spec;
  // The same draw either way, so that random ids change nothing else of the record.
  const tail = (rng() * 0x100000000) >>> 0;
  const sessionId = ctx.sessionIds === "random" ? randomSessionId(ctx.appSeed, initiatedAt, tail) : timeSessionId(ctx.region, ctx.appId, initiatedAt, tail);

  let initiator: string;
  let receiver: string;
  let invited: string[];
  let joinCount = 1;
  if (mode === "call") {
    const a = int(rng, 0, pop.users.length - 1);
    let b = int(rng, 0, pop.users.length - 2);
    if (b >= a) b++;
    initiator = pop.users[a];
    receiver = pop.users[b];
    invited = [receiver];
  } else {
    const g = int(rng, 0, pop.groups.length - 1);
    const members = pop.groupMembers[g];
    receiver = pop.groups[g];
    const start = int(rng, 0, members.length - 1);
    const rot = members.slice(start).concat(members.slice(0, start));
    initiator = pop.users[rot[0]];
    const want = Math.min(rot.length, int(rng, Math.min(shape.meetingJoin[0], ctx.maxMeetingSize), ctx.maxMeetingSize));
    // want members join (initiator included); up to the mix's no-shows more (fewer in
    // small meetings) are invited and never come.
    invited = rot.slice(1, want + int(rng, 0, Math.min(shape.meetingNoShows, ctx.maxMeetingSize - 3))).map((i) => pop.users[i]);
    joinCount = want - 1;
  }

  // Times are drawn before the object is built so its keys come out in the seed's order
  // without a copy (this function runs for every served record).
  const mid = uuidLike(rng);
  const never = status === "unanswered" || status === "rejected";
  const ongoing = status === "ongoing";
  let startedAt: number | undefined;
  let endedAt: number | undefined;
  if (never) {
    // Never started: startedAt is absent and endedAt is when ringing stopped.
    endedAt = initiatedAt + (status === "rejected" ? int(rng, 2, 20) : int(rng, 30, 60));
  } else {
    startedAt = initiatedAt + (mode === "call" ? int(rng, 3, 25) : int(rng, 0, 5));
    if (!ongoing) endedAt = startedAt + durationSeconds(rng, mode, spec.long);
  }
  const call = { sessionId, mid, type, mode, status, initiator, receiver, receiverType: mode === "call" ? "user" : "group", initiatedAt } as CallRecord;
  if (startedAt !== undefined) call.startedAt = startedAt;
  if (endedAt !== undefined) call.endedAt = endedAt;
  call.hasRecording = false;
  call.totalAudioMinutes = 0;
  call.totalVideoMinutes = 0;
  call.totalDurationInMinutes = 0;
  call.totalDuration = "00:00:00";
  call.totalParticipants = 0;
  const rows: CallParticipant[] = (call.participants = []);

  if (startedAt === undefined) {
    rows.push(absentRow(initiator, "ended"));
    for (const uid of invited) rows.push(absentRow(uid, status === "rejected" ? "ended" : "unanswered"));
    return call;
  }
  const span = (endedAt ?? Math.max(spec.clockNow, startedAt + 1)) - startedAt;
  rows.push(joinedRow(rng, initiator, startedAt, endedAt));
  for (let i = 0; i < invited.length; i++) {
    const uid = invited[i];
    if (i >= joinCount) {
      rows.push(absentRow(uid, "unanswered"));
      continue;
    }
    const lateBy = mode === "call" ? 0 : Math.floor(rng() ** 3 * 0.2 * span);
    const earlyBy = mode === "call" || ongoing ? 0 : Math.floor(rng() ** 3 * 0.2 * span);
    const joinAt = startedAt + lateBy;
    const leaveAt = endedAt === undefined ? undefined : Math.max(joinAt + 1, endedAt - earlyBy);
    if (leaveAt !== undefined && leaveAt - joinAt > 20 && rng() < (mode === "call" ? 0.06 : 0.04)) {
      // Rejoin or second device: two rows for one uid, different deviceId/mid/joinedAt.
      const cut = joinAt + Math.floor((leaveAt - joinAt) * (0.2 + 0.6 * rng()));
      const back = Math.min(leaveAt - 1, cut + int(rng, 1, 10));
      rows.push(joinedRow(rng, uid, joinAt, cut));
      rows.push(joinedRow(rng, uid, back, leaveAt));
      continue;
    }
    rows.push(joinedRow(rng, uid, joinAt, leaveAt));
  }
  call.hasRecording = !ongoing && rng() < 0.3;
  finishTotals(call, spec.clockNow);
  return call;
}

/** Same record with keys in the seed's field order (startedAt/endedAt are set late).
 * Plain assignments rather than spreads: this runs for every served record. */
export function inSeedOrder(c: CallRecord): CallRecord {
  const o = {
    sessionId: c.sessionId, mid: c.mid, type: c.type, mode: c.mode, status: c.status,
    initiator: c.initiator, receiver: c.receiver, receiverType: c.receiverType, initiatedAt: c.initiatedAt,
  } as CallRecord;
  if (c.startedAt !== undefined) o.startedAt = c.startedAt;
  if (c.endedAt !== undefined) o.endedAt = c.endedAt;
  o.hasRecording = c.hasRecording;
  o.totalAudioMinutes = c.totalAudioMinutes;
  o.totalVideoMinutes = c.totalVideoMinutes;
  o.totalDurationInMinutes = c.totalDurationInMinutes;
  o.totalDuration = c.totalDuration;
  o.totalParticipants = c.totalParticipants;
  o.participants = c.participants;
  return o;
}

function slotRng(ctx: GenContext, slot: number): Rng {
  return mulberry32(mix(ctx.appSeed, slot, 0x51a7));
}

/** Base record number `slot` of an app (0 <= slot < count). The first ongoingCount slots
 * are the most recent calls and are still ongoing. */
export function generateCallAt(ctx: GenContext, slot: number): CallRecord {
  const rng = slotRng(ctx, slot);
  if (slot < ctx.ongoingCount) {
    const initiatedAt = ctx.now - 120 - slot * 600 - int(rng, 0, 300);
    return buildCall(rng, ctx, { initiatedAt, status: "ongoing", clockNow: ctx.now, long: false });
  }
  const initiatedAt = sampleTime(rng, ctx, ctx.start, ctx.now - 3 * 3600);
  const s = rng();
  const status: CallStatus = s < 0.12 ? "unanswered" : s < 0.19 ? "rejected" : "ended";
  // About one call in a thousand runs past 24 h, so hours > 24 show up in every app.
  const long = mix(ctx.appSeed, slot) % 997 === 500;
  return buildCall(rng, ctx, { initiatedAt, status, clockNow: ctx.now, long });
}

/** Compares two calls newest first: initiatedAt desc, then sessionId desc. */
export function newestFirst(a: CallRecord, b: CallRecord): number {
  if (a.initiatedAt !== b.initiatedAt) return b.initiatedAt - a.initiatedAt;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

/** All calls of one app without wire quirks, newest first (for webhook builders and
 * oracles). */
export function generateCanonicalCalls(p: AppGenParams): CallRecord[] {
  const ctx = makeContext(p);
  const calls: CallRecord[] = [];
  for (let i = 0; i < ctx.count; i++) calls.push(generateCallAt(ctx, i));
  return calls.sort(newestFirst);
}

/** All calls of one app in wire format (quirks applied), newest first: what the list
 * serves, page after page. For small counts; the server uses the lazy store instead. */
export function generateAppCalls(p: AppGenParams): WireCall[] {
  const shape = DATA_MIXES[p.mix ?? "standard"];
  return generateCanonicalCalls(p).map((c) => toWire(c, undefined, shape));
}

