import type { Db } from "@/db/client";
import { RECORDING_WEIGHT, codeOf } from "./dims";
import type { Filters } from "./filters";
import { CELLS, analyticsStore, type AnalyticsStore } from "./store";

/**
 * The filter model compiled against the in-memory store (store.ts), and the scan
 * kernels every report is built from. A filter becomes lookup tables (app pk → ok,
 * cell → ok) and bounds, a selection is the slots of the matching calls, and each
 * kernel is one tight loop over a selection.
 */

export interface Selection {
  store: AnalyticsStore;
  /** Matching slots: sel[0..count). */
  sel: Int32Array;
  count: number;
}

/** Which cells (dims + 360 × duration bucket) pass the categorical filters. */
function cellTable(f: Filters): Uint8Array {
  const ok = new Uint8Array(CELLS);
  const want = (name: "type" | "mode" | "status" | "receiverType", v: string | undefined) => (v === undefined ? -1 : codeOf(name, v));
  const type = want("type", f.type);
  const mode = want("mode", f.mode);
  const status = want("status", f.status);
  const rt = want("receiverType", f.receiverType);
  const rec = f.hasRecording === undefined ? -1 : f.hasRecording ? 1 : 0;
  for (let c = 0; c < CELLS; c++) {
    const d = c % 360;
    ok[c] = Number(
      (type < 0 || d % 3 === type) && (mode < 0 || Math.floor(d / 3) % 4 === mode) && (status < 0 || Math.floor(d / 12) % 5 === status) &&
        (rt < 0 || Math.floor(d / 60) % 3 === rt) && (rec < 0 || Math.floor(d / RECORDING_WEIGHT) === rec),
    );
  }
  return ok;
}

function appTable(s: AnalyticsStore, appPks: number[] | "all"): Uint8Array {
  const max = s.maxApp;
  const ok = new Uint8Array(max + 1);
  if (appPks === "all") ok.fill(1);
  else for (const p of appPks) if (p <= max) ok[p] = 1;
  ok[0] = 0; // empty slots
  return ok;
}

/** Ids (uid dictionary) of `uid` in the allowed apps. */
function uidIdsOf(s: AnalyticsStore, uid: string, appOk: Uint8Array): Set<number> {
  const out = new Set<number>();
  for (const [appPk, m] of s.uidIds) {
    const id = m.get(uid);
    if (id !== undefined && appOk[appPk]) out.add(id);
  }
  return out;
}

export interface SelectOptions {
  /** Ignore from/to (the heatmap's window is not a start filter). */
  ignoreTime?: boolean;
}

/** The calls matching every filter of `f` within `appPks` (resolved and authorised). */
export function select(db: Db, f: Filters, appPks: number[] | "all", opts: SelectOptions = {}): Selection {
  const s = analyticsStore(db);
  const appOk = appTable(s, appPks);
  const cellOk = cellTable(f);
  const from = opts.ignoreTime || f.from === undefined ? -Infinity : f.from;
  const to = opts.ignoreTime || f.to === undefined ? Infinity : f.to;
  const pc = f.participantsCount ?? -1;
  const sel = new Int32Array(s.n);
  let count = 0;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  let uidIds: Set<number> | undefined;
  if (f.uid !== undefined) {
    uidIds = uidIdsOf(s, f.uid, appOk);
    if (uidIds.size === 0) return { store: s, sel, count: 0 };
  }
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a;
  for (let i = 0, n = s.n; i < n; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds) {
      let hit = false;
      for (let j = pOff[i], e = j + pLen[i]; j < e && !hit; j++) hit = uidIds.has(uid[j]);
      if (!hit) continue;
    }
    sel[count++] = i;
  }
  return { store: s, sel, count };
}

/** Per cell sums of a selection: calls, audio, video (minutes), duration seconds, participants. */
export interface Cube {
  calls: Float64Array;
  audio: Float64Array;
  video: Float64Array;
  durS: Float64Array;
  parts: Float64Array;
}

export function cube(x: Selection): Cube {
  const { store: s, sel, count } = x;
  const out: Cube = { calls: new Float64Array(CELLS), audio: new Float64Array(CELLS), video: new Float64Array(CELLS), durS: new Float64Array(CELLS), parts: new Float64Array(CELLS) };
  const cell = s.cell.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a, pc = s.pc.a;
  const { calls, audio: au, video: vi, durS, parts } = out;
  for (let k = 0; k < count; k++) {
    const i = sel[k];
    const c = cell[i];
    calls[c]++;
    au[c] += audio[i];
    vi[c] += video[i];
    durS[c] += dur[i];
    parts[c] += pc[i];
  }
  for (let c = 0; c < CELLS; c++) {
    au[c] /= s.audio.scale;
    vi[c] /= s.video.scale;
  }
  return out;
}

/** Per app pk: calls, audio, video, calls with a recording. */
export function perApp(x: Selection): Map<number, { calls: number; audio: number; video: number; rec: number }> {
  const { store: s, sel, count } = x;
  const app = s.app.a, cell = s.cell.a, audio = s.audio.a, video = s.video.a;
  const acc = new Map<number, { calls: number; audio: number; video: number; rec: number }>();
  for (let k = 0; k < count; k++) {
    const i = sel[k];
    let a = acc.get(app[i]);
    if (!a) acc.set(app[i], (a = { calls: 0, audio: 0, video: 0, rec: 0 }));
    a.calls++;
    a.audio += audio[i];
    a.video += video[i];
    if (cell[i] % 360 >= RECORDING_WEIGHT) a.rec++;
  }
  for (const a of acc.values()) {
    a.audio /= s.audio.scale;
    a.video /= s.video.scale;
  }
  return acc;
}

/** Per uid id over the selection's calls (one entry per distinct uid per call). */
export interface PeopleSums {
  store: AnalyticsStore;
  /** uid ids with listed > 0. */
  ids: Int32Array;
  listed: Int32Array;
  joined: Int32Array;
  unanswered: Int32Array;
  audio: Float64Array;
  video: Float64Array;
  total: Float64Array;
  first: Float64Array;
  last: Float64Array;
}

export function people(x: Selection, withMinutes = true): PeopleSums {
  const { store: s, sel, count } = x;
  const U = s.idUid.length;
  const listed = new Int32Array(U), joined = new Int32Array(U), unanswered = new Int32Array(U);
  const audio = new Float64Array(withMinutes ? U : 0), video = new Float64Array(withMinutes ? U : 0), total = new Float64Array(withMinutes ? U : 0);
  const first = new Float64Array(withMinutes ? U : 0).fill(Infinity), last = new Float64Array(withMinutes ? U : 0).fill(-Infinity);
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a, start = s.start.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  for (let k = 0; k < count; k++) {
    const i = sel[k];
    const t = start[i];
    for (let j = pOff[i], e = j + pLen[i]; j < e; j++) {
      const u = uid[j];
      const fl = flags[j];
      listed[u]++;
      joined[u] += fl & 1;
      unanswered[u] += fl >> 1;
      if (withMinutes) {
        audio[u] += pa[j];
        video[u] += pv[j];
        total[u] += pt[j];
        if (t < first[u]) first[u] = t;
        if (t > last[u]) last[u] = t;
      }
    }
  }
  let n = 0;
  for (let u = 0; u < U; u++) if (listed[u] > 0) n++;
  const ids = new Int32Array(n);
  n = 0;
  for (let u = 0; u < U; u++) if (listed[u] > 0) ids[n++] = u;
  if (withMinutes) {
    for (const u of ids) {
      audio[u] /= s.pAudio.scale;
      video[u] /= s.pVideo.scale;
      total[u] /= s.pTotal.scale;
    }
  }
  return { store: s, ids, listed, joined, unanswered, audio, video, total, first, last };
}

/** SQLite's BINARY order of two strings (UTF-8 bytes = code points), for `ORDER BY uid`. */
export function compareBinary(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
