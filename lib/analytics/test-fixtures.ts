/**
 * Test-only helpers: a warehouse on a fresh SQLite file filled with random calls by
 * plain SQL (the way the sync writes: upsert the call, replace its participants), and
 * the same records kept in memory for the independent oracles of the tests.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Db } from "@/db/client";
import { LOG_CALL_CHANGE } from "@/lib/sync/writer";
import type { AnalyticsEngine } from "./engine-interface";
import { MAX_PER_PAGE, type Filters } from "./filters";
import type { CallListRow } from "./report-types";
import type { Scope } from "./scope";

export interface FixtureParticipant {
  uid: string;
  state: string;
  isJoined: boolean;
  audio: number;
  video: number;
  total: number;
  joinedAt: number | null;
  leftAt: number | null;
}

export interface FixtureCall {
  appPk: number;
  sessionId: string;
  type: string;
  mode: string;
  status: string;
  receiverType: string;
  initiatedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  hasRecording: boolean;
  audio: number;
  video: number;
  total: number;
  durationSeconds: number;
  participants: FixtureParticipant[];
}

export const startOf = (c: FixtureCall) => c.startedAt ?? c.initiatedAt;

export const FIXTURE_UIDS = ["alice", "bob", "carol", "a,b", 'say "hi"', "line\nbreak", "=cmd|' /C calc'!A0", "+1555", "-x", "@h", "zoë", "用户42", "🦄", "dave", "erin", "frank"];

export function tempDbFile(name: string): string {
  return path.join(mkdtempSync(path.join(tmpdir(), "callboard-")), `${name}.db`);
}

export function openFixtureDb(name: string): Db {
  const db = openDatabase(tempDbFile(name));
  const ins = db.$client.prepare(
    "INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES (?, ?, 'us', 'x', 'xxxx')",
  );
  ins.run("app-one", "App One");
  ins.run("app-two", "App Two");
  ins.run("app-three", "App Three");
  return db;
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T,>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function randomCall(r: () => number, i: number, base: number, span: number): FixtureCall {
  const mode = pick(r, ["call", "call", "meet", "presenter", "weird"]);
  const type = pick(r, ["audio", "video", "video"]);
  const status = pick(r, ["ended", "ended", "ended", "unanswered", "rejected", "ongoing"]);
  const initiatedAt = base + Math.floor(r() * span);
  const started = status === "ended" || status === "ongoing";
  const startedAt = started ? initiatedAt + Math.floor(r() * 20) : null;
  const dur = r() < 0.05 ? 3600 * (1 + Math.floor(r() * 30)) : Math.floor(r() * r() * 7200);
  const endedAt = status === "ongoing" ? null : (startedAt ?? initiatedAt) + (started ? dur : 30);
  const n = 1 + Math.floor(r() * 4);
  const participants: FixtureParticipant[] = [];
  for (let k = 0; k < n; k++) {
    const joined = started && r() < 0.8;
    const mins = joined ? r3(r() * dur / 60) : 0;
    const p: FixtureParticipant = {
      uid: pick(r, FIXTURE_UIDS), state: joined ? "ended" : pick(r, ["unanswered", "ended"]), isJoined: joined,
      audio: type === "audio" ? mins : 0, video: type === "video" ? mins : 0, total: mins,
      joinedAt: joined ? startedAt : null, leftAt: joined ? endedAt : null,
    };
    participants.push(p);
    // A uid twice in one call (rejoin / second device).
    if (joined && r() < 0.1) participants.push({ ...p, audio: r3(p.audio / 2), video: r3(p.video / 2), total: r3(p.total / 2) });
  }
  const audio = r3(participants.reduce((s, p) => s + p.audio, 0));
  const video = r3(participants.reduce((s, p) => s + p.video, 0));
  return {
    appPk: 1 + Math.floor(r() * 3), sessionId: `s${i}-${Math.floor(r() * 1e9)}`, type, mode, status,
    receiverType: mode === "call" ? "user" : "group", initiatedAt, startedAt, endedAt,
    hasRecording: started && r() < 0.3, audio, video, total: r3(dur / 60), durationSeconds: started ? dur : 0, participants,
  };
}

/** Writes calls as the sync does (upsert, then replace participants). */
export function writeCalls(db: Db, calls: FixtureCall[]): void {
  const s = db.$client;
  const upsert = s.prepare(`INSERT INTO calls (app_pk, session_id, type, mode, status, receiver_type, initiated_at, started_at, ended_at,
      start_at, platform_has_recording, has_recording, total_audio_minutes, total_video_minutes, total_duration_minutes, duration_seconds,
      total_participants, first_seen_ms, updated_ms)
    VALUES (@appPk, @sessionId, @type, @mode, @status, @receiverType, @initiatedAt, @startedAt, @endedAt, @startAt, @rec, @rec, @audio,
      @video, @total, @durationSeconds, @pc, 0, 0)
    ON CONFLICT (app_pk, session_id) DO UPDATE SET type = excluded.type, mode = excluded.mode, status = excluded.status,
      receiver_type = excluded.receiver_type, initiated_at = excluded.initiated_at, started_at = excluded.started_at,
      ended_at = excluded.ended_at, start_at = excluded.start_at, has_recording = excluded.has_recording,
      total_audio_minutes = excluded.total_audio_minutes, total_video_minutes = excluded.total_video_minutes,
      total_duration_minutes = excluded.total_duration_minutes, duration_seconds = excluded.duration_seconds,
      total_participants = excluded.total_participants
    RETURNING pk`).pluck();
  const stored = s.prepare("SELECT 1 FROM calls WHERE app_pk = ? AND session_id = ?").pluck();
  const del = s.prepare("DELETE FROM call_participants WHERE call_pk = ?");
  const log = s.prepare(LOG_CALL_CHANGE);
  const insP = s.prepare(`INSERT INTO call_participants (call_pk, app_pk, seq, uid, state, is_joined, total_audio_minutes, total_video_minutes,
      total_duration_minutes, joined_at, left_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  s.transaction(() => {
    for (const c of calls) {
      const existed = stored.get(c.appPk, c.sessionId) !== undefined;
      const pk = upsert.get({
        ...c, startAt: startOf(c), rec: c.hasRecording ? 1 : 0, pc: c.participants.filter((p) => p.isJoined).length,
      }) as number;
      del.run(pk);
      // No trigger logs participant inserts: a call stored before is logged here.
      if (existed) log.run(pk, pk);
      c.participants.forEach((p, seq) =>
        insP.run(pk, c.appPk, seq, p.uid, p.state, p.isJoined ? 1 : 0, p.audio, p.video, p.total, p.joinedAt, p.leftAt),
      );
    }
  })();
}

export const participantsCountOf = (c: FixtureCall) => c.participants.filter((p) => p.isJoined).length;

/** Every call of an engine's calls list in its order (page by page: the JSON the routes send). */
export async function allCalls(engine: AnalyticsEngine, f: Filters, scope: Scope = { appPks: "all" }): Promise<CallListRow[]> {
  const out: CallListRow[] = [];
  for (let page = 1; ; page++) {
    const answer = await engine.report("calls", { ...f, page, perPage: MAX_PER_PAGE }, scope);
    out.push(...answer.data);
    if (page >= answer.meta.pagination.total_pages) return out;
  }
}
