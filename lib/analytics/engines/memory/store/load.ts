import type Database from "better-sqlite3";
import type { Db } from "@/db/client";
import { cellSql } from "../scan/cell-codec";
import { emptyStore, findSlot, touchBlock, type AnalyticsStore } from "./store";

/**
 * Loading the store and keeping it current: a full load of every call and its
 * participants (once per connection), then before each report a catch-up on the calls
 * the change log names and the calls inserted since (changelog-sql.ts says what is
 * logged and why); a reader too far behind, or with too much garbage, loads again.
 */

/** A reader further behind than this many log entries (or this share of the calls) reloads. */
const RELOAD_MIN_ENTRIES = 50_000;

const stores = new WeakMap<Database.Database, AnalyticsStore>();

const CALL_SELECT = `SELECT c.pk, c.app_pk, c.start_at, max(coalesce(c.ended_at, c.start_at), c.start_at) - c.start_at,
    ${cellSql("c")}, c.total_participants, c.duration_seconds, c.total_audio_minutes, c.total_video_minutes
  FROM calls c`;

const PARTICIPANT_SELECT = `SELECT p.call_pk, p.uid, (p.is_joined <> 0) + 2 * coalesce(p.state = 'unanswered', 0), p.total_audio_minutes,
    p.total_video_minutes, p.total_duration_minutes FROM call_participants p`;

type CallRaw = [number, number, number, number, number, number, number, number, number];

type PartRaw = [number, string, number, number, number, number];

function growCalls(s: AnalyticsStore, need: number): void {
  if (need <= s.pk.a.length) return;
  const cap = Math.max(need, Math.ceil(s.pk.a.length * 1.5), 1024);
  for (const c of [s.pk, s.app, s.start, s.span, s.cell, s.pc, s.dur, s.audio, s.video, s.pOff, s.pLen]) c.grow(cap);
}

function growEntries(s: AnalyticsStore, need: number): void {
  if (need <= s.uid.a.length) return;
  const cap = Math.max(need, Math.ceil(s.uid.a.length * 1.5), 4096);
  for (const c of [s.uid, s.flags, s.pAudio, s.pVideo, s.pTotal]) c.grow(cap);
}

function setCall(s: AnalyticsStore, i: number, r: CallRaw): void {
  s.pk.set(i, r[0]);
  s.app.set(i, r[1]);
  if (r[1] > s.maxApp) s.maxApp = r[1];
  s.start.set(i, r[2]);
  const b = i >> s.blockBits;
  if (!(s.blockMinStart[b]! <= r[2])) s.blockMinStart[b] = r[2];
  if (!(s.blockMaxStart[b]! >= r[2])) s.blockMaxStart[b] = r[2];
  s.span.set(i, r[3]);
  s.cell.set(i, r[4]);
  s.pc.set(i, r[5]);
  s.dur.set(i, r[6]);
  s.audio.set(i, r[7]);
  s.video.set(i, r[8]);
}

function uidId(s: AnalyticsStore, appPk: number, uid: string): number {
  let m = s.uidIds.get(appPk);
  if (!m) s.uidIds.set(appPk, (m = new Map()));
  let id = m.get(uid);
  if (id === undefined) {
    id = s.idUid.length;
    m.set(uid, id);
    s.idUid.push(uid);
    s.idApp.push(appPk);
  }
  return id;
}

/** Appends the entries of one call (rows of the same call), merging a uid's rows. */
function appendEntries(s: AnalyticsStore, slot: number, rows: PartRaw[]): void {
  const appPk = s.app.a[slot];
  const off = s.m;
  growEntries(s, off + rows.length);
  let k = 0;
  for (const r of rows) {
    const id = uidId(s, appPk, r[1]);
    let j = off;
    while (j < off + k && s.uid.a[j] !== id) j++;
    if (j === off + k) {
      s.uid.set(j, id);
      s.flags.set(j, r[2]);
      s.pAudio.set(j, r[3]);
      s.pVideo.set(j, r[4]);
      s.pTotal.set(j, r[5]);
      k++;
    } else {
      // Same uid twice in one call: one distinct call, minutes summed.
      s.flags.set(j, s.flags.a[j] | r[2]);
      s.pAudio.add(j, r[3]);
      s.pVideo.add(j, r[4]);
      s.pTotal.add(j, r[5]);
    }
  }
  s.m = off + k;
  s.pOff.set(slot, off);
  s.pLen.set(slot, k);
}

function maxSeq(sqlite: Database.Database): number {
  return (sqlite.prepare("SELECT coalesce(max(seq), 0) FROM analytics_changes").pluck().get() as number) ?? 0;
}

function fullLoad(sqlite: Database.Database): AnalyticsStore {
  const seq = maxSeq(sqlite);
  const count = sqlite.prepare("SELECT count(*) FROM calls").pluck().get() as number;
  const s = emptyStore(count + 1024, count * 3 + 4096);
  let maxPk = 0;
  for (const r of sqlite.prepare(`${CALL_SELECT} ORDER BY c.pk`).raw().iterate() as IterableIterator<CallRaw>) {
    growCalls(s, s.n + 1);
    setCall(s, s.n, r);
    maxPk = r[0];
    s.n++;
  }
  // Participants through the (call_pk, seq) index: each call's rows arrive together.
  const slotOf = pkIndex(s, maxPk);
  growEntries(s, (sqlite.prepare("SELECT count(*) FROM call_participants").pluck().get() as number) + 16);
  const group: PartRaw[] = [];
  let groupPk = -1;
  const flush = () => {
    const slot = groupPk < 0 ? -1 : slotOf(groupPk);
    if (slot >= 0) appendEntries(s, slot, group);
    group.length = 0;
  };
  for (const r of sqlite.prepare(`${PARTICIPANT_SELECT} ORDER BY p.call_pk, p.seq`).raw().iterate() as IterableIterator<PartRaw>) {
    if (r[0] !== groupPk) {
      flush();
      groupPk = r[0];
    }
    group.push(r);
  }
  flush();
  s.seq = seq;
  s.loadedAt = Date.now();
  s.fullLoads = 1;
  return s;
}

/** pk → slot lookup over the (ascending) pk column. */
function pkIndex(s: AnalyticsStore, maxPk: number): (pk: number) => number {
  if (maxPk < 4 * s.n + 1_000_000) {
    const direct = new Int32Array(maxPk + 1).fill(-1);
    for (let i = 0; i < s.n; i++) direct[s.pk.a[i]] = i;
    return (pk) => (pk >= 0 && pk <= maxPk ? direct[pk] : -1);
  }
  return (pk) => findSlot(s, pk);
}

function maxPk(sqlite: Database.Database): number {
  return (sqlite.prepare("SELECT coalesce(max(pk), 0) FROM calls").pluck().get() as number) ?? 0;
}

/** The largest pk the store holds (slots are in pk order). */
function lastPkOf(s: AnalyticsStore): number {
  return s.n > 0 ? s.pk.a[s.n - 1] : 0;
}

/** Ascending union of two ascending pk lists. */
function mergePks(a: number[], b: number[]): number[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++];
    if (out.length === 0 || out[out.length - 1] !== x) out.push(x);
  }
  return out;
}

/**
 * Applies the calls named by log entries seq >= s.seq (the newest applied entry is
 * re-read: a participant write right after it appends nothing) and the calls inserted
 * since (pk above the store's largest: new calls are not logged, changelog-sql.ts).
 * Returns false when a full reload is needed instead.
 */
function catchUp(sqlite: Database.Database, s: AnalyticsStore, newest: number): boolean {
  const logged = sqlite.prepare("SELECT DISTINCT call_pk FROM analytics_changes WHERE seq >= ? ORDER BY call_pk").pluck().all(s.seq) as number[];
  if (s.seq > 0 && !sqlite.prepare("SELECT 1 FROM analytics_changes WHERE seq = ?").get(s.seq)) return false; // pruned past us
  const inserted = sqlite.prepare("SELECT pk FROM calls WHERE pk > ? ORDER BY pk").pluck().all(lastPkOf(s)) as number[];
  const pks = mergePks(logged, inserted);
  const calls = new Map<number, CallRaw>();
  const parts = new Map<number, PartRaw[]>();
  const CHUNK = 500;
  for (let i = 0; i < pks.length; i += CHUNK) {
    const chunk = pks.slice(i, i + CHUNK);
    const marks = chunk.map(() => "?").join(", ");
    for (const r of sqlite.prepare(`${CALL_SELECT} WHERE c.pk IN (${marks})`).raw().all(...chunk) as CallRaw[]) calls.set(r[0], r);
    for (const r of sqlite.prepare(`${PARTICIPANT_SELECT} WHERE p.call_pk IN (${marks}) ORDER BY p.call_pk, p.seq`).raw().all(...chunk) as PartRaw[]) {
      const list = parts.get(r[0]);
      if (list) list.push(r);
      else parts.set(r[0], [r]);
    }
  }
  const lastPk = lastPkOf(s);
  for (const pk of pks) {
    const row = calls.get(pk);
    let slot = findSlot(s, pk);
    if (slot < 0) {
      if (!row) continue; // inserted and deleted between two reports
      if (pk < lastPk) return false; // out of pk order: never done by AUTOINCREMENT; reload
      growCalls(s, s.n + 1);
      slot = s.n++;
    }
    s.garbage += s.pLen.a[slot];
    touchBlock(s, slot);
    if (!row) {
      s.app.set(slot, 0);
      s.pLen.set(slot, 0);
      continue;
    }
    setCall(s, slot, row);
    appendEntries(s, slot, parts.get(pk) ?? []);
  }
  s.seq = newest;
  return true;
}

/**
 * The store of this connection, current with every committed write (of this or any
 * other process) — call it at the start of each report; the report then reads a
 * consistent snapshot (single-threaded: nothing changes the store until it returns).
 */
export function analyticsStore(db: Db): AnalyticsStore {
  const sqlite = db.$client;
  return sqlite.transaction(() => {
    let s = stores.get(sqlite);
    const newest = maxSeq(sqlite);
    if (s && newest >= s.seq) {
      const behind = newest - s.seq + Math.max(0, maxPk(sqlite) - lastPkOf(s));
      const tooFar = behind > Math.max(RELOAD_MIN_ENTRIES, s.n / 8) || s.garbage > Math.max(1_000_000, s.m / 2);
      if (!tooFar && catchUp(sqlite, s, newest)) return s;
    }
    const fullLoads = (s?.fullLoads ?? 0) + 1;
    s = fullLoad(sqlite);
    s.fullLoads = fullLoads;
    stores.set(sqlite, s);
    return s;
  })();
}

/**
 * The store of this connection as it stands, without catching up (loaded if there is
 * none): for reads that check the change log themselves (the calls CSV, calls-csv.ts).
 */
export function currentStore(db: Db): AnalyticsStore {
  return stores.get(db.$client) ?? analyticsStore(db);
}

/** The store of this connection if one is loaded (never loads: health checks). */
export function loadedStore(db: Db): AnalyticsStore | undefined {
  return stores.get(db.$client);
}

/** Drops this connection's store (tests; a warehouse file replaced underneath). */
export function resetAnalyticsStore(db: Db): void {
  stores.delete(db.$client);
}
