import type { Db } from "@/db/client";
import { RECORDING_WEIGHT, codeOf } from "../../dims";
import type { Filters } from "../../filters";
import { CELLS, SUPER_SHIFT, analyticsStore, currentStore, type AnalyticsStore, type CubeBlock, type DimsPeople, type HeatBlock, type PeopleBlock, type QuarterBlock } from "./store";

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
  /**
   * Use the store as it stands, without catching up with the warehouse: a second pass
   * of the same job must see what the first one saw (the calls CSV's head, then order).
   */
  asIs?: boolean;
}

/** A filter compiled against one store: lookup tables and bounds (`uidIds` undefined: no uid filter). */
interface Plan {
  s: AnalyticsStore;
  appOk: Uint8Array;
  cellOk: Uint8Array;
  from: number;
  to: number;
  pc: number;
  uidIds: Set<number> | undefined;
  /** Nothing can match (a uid filter naming no known uid). */
  none: boolean;
}

function compile(db: Db, f: Filters, appPks: number[] | "all", opts: SelectOptions = {}): Plan {
  const s = opts.asIs ? currentStore(db) : analyticsStore(db);
  const appOk = appTable(s, appPks);
  const uidIds = f.uid === undefined ? undefined : uidIdsOf(s, f.uid, appOk);
  return {
    s, appOk, cellOk: cellTable(f),
    from: opts.ignoreTime || f.from === undefined ? -Infinity : f.from,
    to: opts.ignoreTime || f.to === undefined ? Infinity : f.to,
    pc: f.participantsCount ?? -1,
    uidIds, none: uidIds !== undefined && uidIds.size === 0,
  };
}

/**
 * Entries a superblock's keys must stand for, on average, for its sums to be kept: 8
 * bounds their memory (68 bytes a key) to about a third of the entries' own (17 bytes
 * an entry), whatever the data.
 */
const DIMS_KEEP_RATIO = 8;

/** Calls a block's cube keys must stand for, on average: fewer, and scanning costs about the same. */
const CUBE_KEEP_RATIO = 4;

/** Tests: keep every superblock's and block's sums whatever their key count (the fixtures' few calls repeat little). */
let keepAllSums = false;

export function setKeepAllSums(on: boolean): void {
  keepAllSums = on;
}

/** Whether call slot i lists one of the uid ids (the uid filter). */
function listsUid(s: AnalyticsStore, ids: Set<number>, i: number): boolean {
  const uid = s.uid.a;
  for (let j = s.pOff.a[i], e = j + s.pLen.a[i]; j < e; j++) if (ids.has(uid[j])) return true;
  return false;
}

/*
 * Every kernel below walks the slots with the same four tests (app, start, cell,
 * participants count, then uid) written out inline: a shared predicate or visitor
 * callback would cost a call per slot. `select` materialises the matching slots for the
 * reports that walk them more than once or in a second phase; the fused kernels
 * (count, cube, per app) aggregate in the same pass and allocate no selection.
 */

/** The calls matching every filter of `f` within `appPks` (resolved and authorised). */
export function select(db: Db, f: Filters, appPks: number[] | "all", opts: SelectOptions = {}): Selection {
  const { s, appOk, cellOk, from, to, pc, uidIds, none } = compile(db, f, appPks, opts);
  const sel = new Int32Array(none ? 0 : s.n);
  let count = 0;
  if (none) return { store: s, sel, count };
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  for (let i = 0, n = s.n; i < n; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    sel[count++] = i;
  }
  return { store: s, sel, count };
}

/** Number of matching calls (the calls list's total): the per-cell counts of `cellCountsOf` (block sums where the filter allows), summed. */
export function countMatching(db: Db, f: Filters, appPks: number[] | "all"): number {
  let count = 0;
  for (const n of cellCountsOf(db, f, appPks)) count += n;
  return count;
}

/** Sort keys of the calls list (filters.ts SORT_KEYS). */
export type SortKeyName = "start" | "duration" | "participants" | "minutes";

/** Matching slots (ascending) and each one's sort key, in scratch arrays valid until the next call (unless `own`). */
export interface KeyedSelection {
  store: AnalyticsStore;
  sel: Int32Array;
  keys: Float64Array;
  count: number;
}

let keyedSel = new Int32Array(0);
let keyedKeys = new Float64Array(0);

/**
 * Builds the sums of every full block and superblock of the store as it stands (the
 * worker, right after loading it): the first reports after a start answer as fast as
 * the next ones instead of building what they read (up to ~2 s at 10M calls for the
 * participants under a categorical filter). Later changes rebuild on use, as before.
 */
export function prebuildBlockSums(db: Db, maxCrossings: number): void {
  const s = currentStore(db);
  for (let b = 0, full = s.n >> s.blockBits; b < full; b++) {
    peopleBlock(s, b);
    cubeBlock(s, b);
    quarterBlock(s, b);
    heatBlock(s, b, maxCrossings);
  }
  for (let g = 0, full = s.n >> (s.blockBits + SUPER_SHIFT); g < full; g++) dimsPeople(s, g);
}

/** Allocates matchKeys' scratch for a store of n calls now (as order.ts reserveSortScratch); returns its bytes. */
export function reserveKeyedScratch(n: number): number {
  if (keyedSel.length < n) {
    keyedSel = new Int32Array(Math.ceil(n * 1.25));
    keyedKeys = new Float64Array(keyedSel.length);
  }
  // Written once: resident now, not at the first sort (see reserveSortScratch).
  keyedSel.fill(0);
  keyedKeys.fill(0);
  return keyedSel.byteLength + keyedKeys.byteLength;
}

/**
 * The calls matching `f` with their sort key, in one pass: the key is the value SQLite
 * sorted on — start_at, duration_seconds, total_participants, or the double sum
 * `total_audio_minutes + total_video_minutes` (a stored thousandth m reads back as
 * m / 1000, the very double SQLite holds, so the sum rounds as SQLite's does).
 */
export function matchKeys(db: Db, f: Filters, appPks: number[] | "all", sort: SortKeyName, own = false, opts: SelectOptions = {}): KeyedSelection {
  const { s, appOk, cellOk, from, to, pc, uidIds, none } = compile(db, f, appPks, opts);
  if (keyedSel.length < s.n) {
    keyedSel = new Int32Array(Math.ceil(s.n * 1.25));
    keyedKeys = new Float64Array(keyedSel.length);
  }
  const sel = keyedSel, keys = keyedKeys;
  // `own`: the caller keeps the arrays across reports (the calls CSV's order): they leave
  // the scratch, the next call allocates its own.
  if (own) {
    keyedSel = new Int32Array(0);
    keyedKeys = new Float64Array(0);
  }
  let count = 0;
  if (none) return { store: s, sel, keys, count };
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const key = sort === "start" ? start : sort === "duration" ? s.dur.a : sort === "participants" ? pcs : undefined;
  const audio = s.audio.a, video = s.video.a, aScale = s.audio.scale, vScale = s.video.scale;
  const nApps = appOk.length;
  for (let i = 0, n = s.n; i < n; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    sel[count] = i;
    // `+ 0` turns −0 into 0: SQLite compares them equal (ties then go by pk).
    keys[count++] = key !== undefined ? key[i] : audio[i] / aScale + video[i] / vScale + 0;
  }
  return { store: s, sel, keys, count };
}

/**
 * The first `n` matches of the calls list sorted by start: slots in output order —
 * (start, slot) ascending, or the reverse for `desc` — as `matchKeys` plus a sort would
 * give them, without a pass over every call. Blocks are visited in the order of their
 * start bounds (store.ts blockMinStart / blockMaxStart) and the walk stops once no block
 * left can hold a start that sorts before the n-th found (a bound equal to it may still
 * hold a tie with a better slot: that block is read). Calls written roughly in time
 * order (a backfill) make this one or two blocks however large the store.
 */
export function startHead(db: Db, f: Filters, appPks: number[] | "all", n: number, desc: boolean): { store: AnalyticsStore; slots: Int32Array } {
  const { s, appOk, cellOk, from, to, pc, uidIds, none } = compile(db, f, appPks);
  const size = 1 << s.blockBits;
  const blocks = none ? 0 : Math.ceil(s.n / size);
  const lo = s.blockMinStart, hi = s.blockMaxStart;
  const visit = Array.from({ length: blocks }, (_, b) => b)
    .filter((b) => hi[b]! >= from && lo[b]! < to)
    .sort(desc ? (a, b) => hi[b]! - hi[a]! : (a, b) => lo[a]! - lo[b]!);
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  let slots: number[] = [];
  const better = (a: number, b: number) => (desc ? start[b] - start[a] || b - a : start[a] - start[b] || a - b);
  for (const b of visit) {
    if (slots.length >= n) {
      const nth = start[slots[n - 1]!]!;
      if (desc ? hi[b]! < nth : lo[b]! > nth) break;
    }
    for (let i = b * size, e = Math.min(s.n, i + size); i < e; i++) {
      const ap = app[i];
      if (ap >= nApps || appOk[ap] === 0) continue;
      const t = start[i];
      if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
      if (pc >= 0 && pcs[i] !== pc) continue;
      if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
      slots.push(i);
    }
    // The best n so far, in output order (a block holds at most 65,536 slots).
    slots.sort(better);
    if (slots.length > n) slots = slots.slice(0, n);
  }
  return { store: s, slots: Int32Array.from(slots) };
}

/** Per cell sums of a selection: calls, audio, video (minutes), duration seconds, participants. */
export interface Cube {
  calls: Float64Array;
  audio: Float64Array;
  video: Float64Array;
  durS: Float64Array;
  parts: Float64Array;
}

function emptyCube(): Cube {
  return { calls: new Float64Array(CELLS), audio: new Float64Array(CELLS), video: new Float64Array(CELLS), durS: new Float64Array(CELLS), parts: new Float64Array(CELLS) };
}

function cubeMinutes(s: AnalyticsStore, out: Cube): Cube {
  for (let c = 0; c < CELLS; c++) {
    out.audio[c] /= s.audio.scale;
    out.video[c] /= s.video.scale;
  }
  return out;
}

/**
 * Per cell sums of the matching calls, in one pass over the slots (no selection). Where
 * the filter is categorical, by app and time only (no participants-count or uid filter)
 * and minutes sum exactly in any order, a block inside the window adds its per-(app,
 * cell) sums (CubeBlock) instead of its slots; blocks outside it are skipped.
 */
export function cubeOf(db: Db, f: Filters, appPks: number[] | "all"): Cube {
  const plan = compile(db, f, appPks);
  const out = emptyCube();
  if (plan.none) return out;
  eachCubePart(plan, true, (lo, hi) => cubeSlots(plan, lo, hi, out), (cb) => addCubeBlock(plan, cb, out, true));
  return cubeMinutes(plan.s, out);
}

/**
 * Matching calls per cell only (the durations report): the cube's filter without its
 * sums, so a scanned block reads 8 bytes a call (app, start, cell) rather than 22.
 */
export function cellCountsOf(db: Db, f: Filters, appPks: number[] | "all"): Float64Array {
  const plan = compile(db, f, appPks);
  const out = emptyCube();
  if (plan.none) return out.calls;
  eachCubePart(plan, false, (lo, hi) => cellCountSlots(plan, lo, hi, out.calls), (cb) => addCubeBlock(plan, cb, out, false));
  return out.calls;
}

/**
 * Walks the slots for the cube's kernels: `slots` for ranges to scan, `block` for blocks
 * whose sums stand in (`minutes`: the caller adds minutes, which must then sum exactly).
 */
function eachCubePart(plan: Plan, minutes: boolean, slots: (lo: number, hi: number) => void, block: (cb: CubeBlock) => void): void {
  const { s, from, to, pc, uidIds } = plan;
  const sums = pc < 0 && uidIds === undefined && (!minutes || (sumsExact(s.audio, s.n) && sumsExact(s.video, s.n)));
  const bits = s.blockBits;
  const full = s.n >> bits;
  for (let b = 0; b < full; b++) {
    if (!(s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to)) continue; // no start of the block in the window
    if (sums) {
      const cb = cubeBlock(s, b);
      if (cb.sums !== null && cb.minStart >= from && cb.maxStart < to) {
        block(cb);
        continue;
      }
    }
    const lo = b << bits;
    slots(lo, lo + (1 << bits));
  }
  slots(full << bits, s.n);
}

function cubeSlots(plan: Plan, lo: number, hi: number, out: Cube): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const { calls, audio: au, video: vi, durS, parts } = out;
  const nApps = appOk.length;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    const c = cell[i];
    if (t < from || t >= to || cellOk[c] === 0) continue;
    const p = pcs[i];
    if (pc >= 0 && p !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    calls[c]++;
    au[c] += audio[i];
    vi[c] += video[i];
    durS[c] += dur[i];
    parts[c] += p;
  }
}

function cellCountSlots(plan: Plan, lo: number, hi: number, calls: Float64Array): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    const c = cell[i];
    if (t < from || t >= to || cellOk[c] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    calls[c]++;
  }
}

/** The apps holding calls in slots [lo, hi) (`appIndex[pk]` their index in `apps`, −1 for others) and the bounds of those calls' starts. */
function blockCalls(s: AnalyticsStore, lo: number, hi: number): { appIndex: Int32Array; apps: number[]; minStart: number; maxStart: number } {
  const app = s.app.a, start = s.start.a;
  const appIndex = new Int32Array(s.maxApp + 1).fill(-1);
  const apps: number[] = [];
  let minStart = Infinity, maxStart = -Infinity;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap === 0) continue; // empty slot
    if (appIndex[ap] < 0) {
      appIndex[ap] = apps.length;
      apps.push(ap);
    }
    const t = start[i];
    if (t < minStart) minStart = t;
    if (t > maxStart) maxStart = t;
  }
  return { appIndex, apps, minStart, maxStart };
}

/** Block b's sums per (app, cell), built (one pass over its slots) if missing or stale. */
function cubeBlock(s: AnalyticsStore, b: number): CubeBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.cubeBlocks[b];
  if (cached && cached.stamp === stamp) return cached;
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const app = s.app.a, cell = s.cell.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const { appIndex, apps, minStart, maxStart } = blockCalls(s, lo, hi);
  // Key → row, by (app index, cell); rows in the order met.
  const rowOf = new Int32Array(apps.length * CELLS).fill(-1);
  const maxKeys = keepAllSums ? hi - lo : (hi - lo) / CUBE_KEEP_RATIO;
  const keys = new Int32Array(maxKeys);
  const sums = new Float64Array(maxKeys * 5);
  let n = 0;
  let kept = true;
  for (let i = lo; i < hi && kept; i++) {
    const ap = app[i];
    if (ap === 0) continue;
    const c = cell[i];
    const x = appIndex[ap] * CELLS + c;
    let r = rowOf[x];
    if (r < 0) {
      if (n === maxKeys) {
        kept = false;
        break;
      }
      r = rowOf[x] = n++;
      keys[r] = ap * CELLS + c;
    }
    const o = r * 5;
    sums[o]++;
    sums[o + 1] += audio[i];
    sums[o + 2] += video[i];
    sums[o + 3] += dur[i];
    sums[o + 4] += pcs[i];
  }
  const cb: CubeBlock = kept
    ? { stamp, keys: keys.slice(0, n), sums: sums.slice(0, n * 5), minStart, maxStart }
    : { stamp, keys: new Int32Array(0), sums: null, minStart, maxStart };
  s.cubeBlocks[b] = cb;
  return cb;
}

/** Adds a block's sums of the allowed (app, cell) keys to the cube (`withSums` false: calls only). */
function addCubeBlock(plan: Plan, cb: CubeBlock, out: Cube, withSums: boolean): void {
  const { appOk, cellOk } = plan;
  const { keys } = cb;
  const sums = cb.sums!;
  const { calls, audio: au, video: vi, durS, parts } = out;
  for (let q = 0; q < keys.length; q++) {
    const k = keys[q];
    const ap = (k / CELLS) | 0;
    const c = k - ap * CELLS;
    if (ap >= appOk.length || appOk[ap] === 0 || cellOk[c] === 0) continue;
    const o = q * 5;
    calls[c] += sums[o];
    if (!withSums) continue;
    au[c] += sums[o + 1];
    vi[c] += sums[o + 2];
    durS[c] += sums[o + 3];
    parts[c] += sums[o + 4];
  }
}

/** RECORDING_WEIGHT as a module constant: an imported binding is re-loaded on every use in a loop. */
const REC_WEIGHT = RECORDING_WEIGHT;

/** Per app pk (index): matching calls, audio and video minutes, calls with a recording, distinct uids listed. */
export interface AppSums {
  calls: Float64Array;
  audio: Float64Array;
  video: Float64Array;
  rec: Float64Array;
  people: Float64Array;
}

/**
 * Per app: calls, minutes, recordings (from the cube's block sums where the filter
 * allows, else slot by slot), and the distinct uids listed (what `people` counts) in a
 * pass over the matching calls' entries that stops once every allowed app's uids were all
 * seen; into arrays by app pk (no Map lookup per call).
 */
export function perAppOf(db: Db, f: Filters, appPks: number[] | "all"): AppSums {
  const plan = compile(db, f, appPks);
  const { s, none } = plan;
  const A = s.maxApp + 1;
  const out: AppSums = { calls: new Float64Array(A), audio: new Float64Array(A), video: new Float64Array(A), rec: new Float64Array(A), people: new Float64Array(A) };
  if (none) return out;
  eachCubePart(plan, true, (lo, hi) => appSlots(plan, lo, hi, out), (cb) => addAppBlock(plan, cb, out));
  appPeople(plan, out.people);
  for (let a = 0; a < A; a++) {
    out.audio[a] /= s.audio.scale;
    out.video[a] /= s.video.scale;
  }
  return out;
}

function appSlots(plan: Plan, lo: number, hi: number, out: AppSums): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a;
  const { calls, audio: au, video: vi, rec } = out;
  const nApps = appOk.length;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    const c = cell[i];
    if (t < from || t >= to || cellOk[c] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    calls[ap]++;
    au[ap] += audio[i];
    vi[ap] += video[i];
    if (c % 360 >= REC_WEIGHT) rec[ap]++;
  }
}

function addAppBlock(plan: Plan, cb: CubeBlock, out: AppSums): void {
  const { appOk, cellOk } = plan;
  const { keys } = cb;
  const sums = cb.sums!;
  const { calls, audio: au, video: vi, rec } = out;
  for (let q = 0; q < keys.length; q++) {
    const ap = (keys[q] / CELLS) | 0;
    const c = keys[q] - ap * CELLS;
    if (ap >= appOk.length || appOk[ap] === 0 || cellOk[c] === 0) continue;
    const o = q * 5;
    calls[ap] += sums[o];
    au[ap] += sums[o + 1];
    vi[ap] += sums[o + 2];
    if (c % 360 >= REC_WEIGHT) rec[ap] += sums[o];
  }
}

/** Distinct uids listed in the matching calls, per app (uid ids are per app). */
function appPeople(plan: Plan, people: Float64Array): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a;
  const seen = new Uint8Array(s.idUid.length);
  // uid ids of each app not seen yet: once none is left, no later entry of that app can
  // add a distinct uid and its entries are not read at all; once none is left in any
  // allowed app, the pass ends (with a few hundred uids per app: after a few thousand calls).
  const unseen = new Float64Array(people.length);
  let left = 0;
  for (const [appPk, m] of s.uidIds) {
    if (appPk < people.length && appPk < appOk.length && appOk[appPk] === 1) {
      unseen[appPk] = m.size;
      left += m.size;
    }
  }
  const nApps = appOk.length;
  const size = 1 << s.blockBits;
  for (let lo = 0, b = 0; lo < s.n && left > 0; lo += size, b++) {
    if (!(s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to)) continue; // no start of the block in the window
    for (let i = lo, hi = Math.min(s.n, lo + size); i < hi; i++) {
      const ap = app[i];
      if (ap >= nApps || appOk[ap] === 0 || unseen[ap] === 0) continue;
      const t = start[i];
      if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
      if (pc >= 0 && pcs[i] !== pc) continue;
      if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
      for (let j = pOff[i], e = j + pLen[i]; j < e; j++) {
        const u = uid[j];
        if (seen[u] === 0) {
          seen[u] = 1;
          people[ap]++;
          unseen[ap]--;
          left--;
        }
      }
    }
  }
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

/**
 * Doubles per uid in the participants' sums (a local constant, not store.ts's export: V8
 * folds it into the index arithmetic; an imported binding is loaded on every use, which
 * cost the entry loop ~1.7×).
 */
const ROW = 8;

/**
 * Per uid id over the matching calls (what the participants report, `withMinutes`, and
 * engagement, calls per uid only, aggregate). uid ids index plain typed arrays — a few
 * thousand entries, cache-resident.
 *
 * The pass over the entries is bound by memory bandwidth (17 bytes an entry, ~3 entries
 * a call: reading them alone is most of the time), so where the filter keeps every call
 * of a block of 65,536 slots — no categorical, participants-count or uid filter, the
 * block's starts inside [from, to); the app filter applies per uid id, ids being per
 * app — the block's per-uid sums (store.ts PeopleBlock, built by one unfiltered pass
 * and kept until a slot of the block changes) are added instead of its entries. Exact:
 * counts, minima and maxima do not depend on order, and minutes held as integer
 * thousandths sum to the same integer in any order while n × maxAbs ≤ 2^53 (checked;
 * otherwise, or for minutes held as plain doubles, every entry is added in slot order
 * as before).
 */
export function peopleOf(db: Db, f: Filters, appPks: number[] | "all", withMinutes = true): PeopleSums {
  const plan = compile(db, f, appPks);
  const { s, cellOk, from, to, pc, uidIds, none } = plan;
  const U = s.idUid.length;
  const W = withMinutes ? U : 0;
  const listed = new Int32Array(U);
  // One row of ROW doubles per uid (listed unused, joined, unanswered, audio, video,
  // total, first, last): an entry touches one cache line, not seven arrays.
  const acc = newPeopleAcc(W);
  if (none) return peopleSums(s, listed, acc, withMinutes);
  const sumsApply = uidIds === undefined && pc < 0 && (!withMinutes || blockSumsExact(s));
  if (sumsApply && cellOk.every((x) => x === 1)) {
    const bits = s.blockBits;
    const full = s.n >> bits;
    for (let b = 0; b < full; b++) {
      const blk = peopleBlock(s, b);
      if (blk.ids !== null && blk.minStart >= from && blk.maxStart < to) addPeopleBlock(s, plan.appOk, blk, listed, acc, withMinutes);
      else scanPeople(plan, b << bits, (b + 1) << bits, listed, acc, withMinutes);
    }
    scanPeople(plan, full << bits, s.n, listed, acc, withMinutes);
  } else if (sumsApply) {
    // Categorical filters only: a superblock's sums per (dims code, uid) hold the answer
    // for any of them (a filter keeps or drops whole dims codes).
    const bits = s.blockBits + SUPER_SHIFT;
    const full = s.n >> bits;
    for (let g = 0; g < full; g++) {
      const sb = dimsPeople(s, g);
      if (sb.dOff !== null && sb.minStart >= from && sb.maxStart < to) addDimsPeople(s, plan.appOk, cellOk, sb, listed, acc, withMinutes);
      else scanPeople(plan, g << bits, (g + 1) << bits, listed, acc, withMinutes);
    }
    scanPeople(plan, full << bits, s.n, listed, acc, withMinutes);
  } else scanPeople(plan, 0, s.n, listed, acc, withMinutes);
  return peopleSums(s, listed, acc, withMinutes);
}

function newPeopleAcc(uids: number): Float64Array<ArrayBuffer> {
  const acc = new Float64Array(uids * ROW);
  for (let k = 0; k < acc.length; k += ROW) {
    acc[k + 6] = Infinity;
    acc[k + 7] = -Infinity;
  }
  return acc;
}

/** Whether the participants' minutes are integer thousandths whose sums, in any order, are exact. */
function blockSumsExact(s: AnalyticsStore): boolean {
  const cols = [s.pAudio, s.pVideo, s.pTotal];
  return cols.every((c) => c.scale === 1000 && s.m * c.maxAbs <= Number.MAX_SAFE_INTEGER);
}

/** Adds the entries of the matching calls among slots [lo, hi) (entry by entry, in slot order). */
function scanPeople(plan: Plan, lo: number, hi: number, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { s, from, to } = plan;
  // Block by block, leaving out those whose starts all lie outside the window.
  const size = 1 << s.blockBits;
  for (let a = lo; a < hi; ) {
    const b = a >> s.blockBits;
    const e = Math.min(hi, (b + 1) * size);
    if (s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to) scanPeopleSlots(plan, a, e, listed, acc, withMinutes);
    a = e;
  }
}

function scanPeopleSlots(plan: Plan, lo: number, hi: number, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  const nApps = appOk.length;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    const e = pOff[i] + pLen[i];
    // Two loops rather than a branch per entry: engagement needs only the counts.
    if (!withMinutes) {
      for (let j = pOff[i]; j < e; j++) listed[uid[j]]++;
      continue;
    }
    for (let j = pOff[i]; j < e; j++) {
      const u = uid[j];
      const fl = flags[j];
      const k = u * ROW;
      listed[u]++;
      acc[k + 1] += fl & 1;
      acc[k + 2] += fl >> 1;
      acc[k + 3] += pa[j];
      acc[k + 4] += pv[j];
      acc[k + 5] += pt[j];
      if (t < acc[k + 6]) acc[k + 6] = t;
      if (t > acc[k + 7]) acc[k + 7] = t;
    }
  }
}

/** Scratch of the block builds: per uid id, zeroed again after each build. */
let blockListed = new Int32Array(0);
let blockAcc = new Float64Array(0);

/** Sizes the builds' scratch for U uid ids. */
function peopleScratch(U: number): void {
  if (blockListed.length >= U) return;
  blockListed = new Int32Array(Math.ceil(U * 1.25));
  blockAcc = newPeopleAcc(blockListed.length);
}

/** Returns uid u's scratch row to empty (as newPeopleAcc made it). */
function resetPeopleRow(u: number): void {
  const k = u * ROW;
  blockListed[u] = 0;
  for (let c = 1; c < 6; c++) blockAcc[k + c] = 0;
  blockAcc[k + 6] = Infinity;
  blockAcc[k + 7] = -Infinity;
}

/** Block b's per-uid sums, built (one unfiltered pass over its slots) if missing or stale. */
function peopleBlock(s: AnalyticsStore, b: number): PeopleBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.peopleBlocks[b];
  if (cached && cached.stamp === stamp) return cached;
  peopleScratch(s.idUid.length);
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a;
  const { minStart, maxStart } = blockCalls(s, lo, hi);
  sumPeopleEntries(s, lo, hi, blockListed, blockAcc);
  // The uids listed, each once (listed turned negative once taken), in the order met.
  const ids: number[] = [];
  let entries = 0;
  for (let i = lo; i < hi; i++) {
    for (let j = pOff[i], e = j + pLen[i]; j < e; j++) {
      const u = uid[j];
      entries++;
      if (blockListed[u] > 0) {
        ids.push(u);
        blockListed[u] = -blockListed[u];
      }
    }
  }
  // Sums pay off only where uids repeat: a block of mostly one-off uids is scanned.
  const keep = ids.length * 4 <= entries;
  const sums = new Float64Array(keep ? ids.length * ROW : 0);
  for (let q = 0; q < ids.length; q++) {
    const u = ids[q], k = u * ROW, o = q * ROW;
    if (keep) {
      sums[o] = -blockListed[u];
      for (let c = 1; c < ROW; c++) sums[o + c] = blockAcc[k + c];
    }
    resetPeopleRow(u);
  }
  const blk: PeopleBlock = { stamp, ids: keep ? Int32Array.from(ids) : null, sums, minStart, maxStart };
  s.peopleBlocks[b] = blk;
  return blk;
}

/**
 * Every entry of slots [lo, hi), unfiltered: scanPeople's sums without its tests (its own
 * function, so that scanPeople's loads and tests stay specialised to real filters).
 */
function sumPeopleEntries(s: AnalyticsStore, lo: number, hi: number, listed: Int32Array, acc: Float64Array): void {
  const start = s.start.a, pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  for (let i = lo; i < hi; i++) {
    const t = start[i];
    for (let j = pOff[i], e = j + pLen[i]; j < e; j++) {
      const u = uid[j];
      const fl = flags[j];
      const k = u * ROW;
      listed[u]++;
      acc[k + 1] += fl & 1;
      acc[k + 2] += fl >> 1;
      acc[k + 3] += pa[j];
      acc[k + 4] += pv[j];
      acc[k + 5] += pt[j];
      if (t < acc[k + 6]) acc[k + 6] = t;
      if (t > acc[k + 7]) acc[k + 7] = t;
    }
  }
}

/** Scratch of the superblock builds: slots grouped by dims code. */
let dimsSlots = new Int32Array(0);

/**
 * Superblock g's sums per (dims code, uid id), built if missing or stale: its slots
 * grouped by dims code (a counting sort), then per code one pass over those calls'
 * entries into the per-uid scratch, whose touched rows become the code's rows. Kept only
 * where a key stands for DIMS_KEEP_RATIO or more entries on average; else `dOff` is null.
 */
function dimsPeople(s: AnalyticsStore, g: number): DimsPeople {
  const stamp = s.superStamp[g] ?? 0;
  const cached = s.dimsPeople[g];
  if (cached && cached.stamp === stamp) return cached;
  peopleScratch(s.idUid.length);
  const lo = g << (s.blockBits + SUPER_SHIFT), hi = lo + (1 << (s.blockBits + SUPER_SHIFT));
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  const dOff = new Int32Array(361);
  let entries = 0, minStart = Infinity, maxStart = -Infinity;
  for (let i = lo; i < hi; i++) {
    const t = start[i];
    if (t < minStart) minStart = t;
    if (t > maxStart) maxStart = t;
    if (app[i] === 0) continue; // empty slot
    dOff[(cell[i] % 360) + 1]++;
    entries += pLen[i];
  }
  for (let d = 0; d < 360; d++) dOff[d + 1] += dOff[d];
  if (dimsSlots.length < hi - lo) dimsSlots = new Int32Array(hi - lo);
  const fill = dOff.slice(0, 360);
  for (let i = lo; i < hi; i++) if (app[i] !== 0) dimsSlots[fill[cell[i] % 360]++] = i;
  const maxKeys = keepAllSums ? entries : Math.floor(entries / DIMS_KEEP_RATIO);
  const ids = new Int32Array(maxKeys);
  const sums = new Float64Array(maxKeys * ROW);
  const rowOff = new Int32Array(361);
  const touched: number[] = [];
  let keys = 0;
  let kept = true;
  for (let d = 0; d < 360 && kept; d++) {
    for (let k = dOff[d]; k < dOff[d + 1]; k++) {
      const i = dimsSlots[k];
      const t = start[i];
      for (let j = pOff[i], e = j + pLen[i]; j < e; j++) {
        const u = uid[j];
        const fl = flags[j];
        const r = u * ROW;
        if (blockListed[u] === 0) touched.push(u);
        blockListed[u]++;
        blockAcc[r + 1] += fl & 1;
        blockAcc[r + 2] += fl >> 1;
        blockAcc[r + 3] += pa[j];
        blockAcc[r + 4] += pv[j];
        blockAcc[r + 5] += pt[j];
        if (t < blockAcc[r + 6]) blockAcc[r + 6] = t;
        if (t > blockAcc[r + 7]) blockAcc[r + 7] = t;
      }
    }
    if (keys + touched.length > maxKeys) kept = false;
    for (const u of touched) {
      const r = u * ROW;
      if (kept) {
        const o = keys * ROW;
        ids[keys++] = u;
        sums[o] = blockListed[u];
        for (let c = 1; c < ROW; c++) sums[o + c] = blockAcc[r + c];
      }
      resetPeopleRow(u);
    }
    touched.length = 0;
    rowOff[d + 1] = keys;
  }
  const sb: DimsPeople = kept
    ? { stamp, dOff: rowOff, ids: ids.slice(0, keys), sums: sums.slice(0, keys * ROW), minStart, maxStart }
    : { stamp, dOff: null, ids: new Int32Array(0), sums: new Float64Array(0), minStart, maxStart };
  s.dimsPeople[g] = sb;
  return sb;
}

/**
 * Adds a superblock's rows of the dims codes the filter keeps (`cellOk` of a code: a
 * filter's table depends on the dims code only, cell % 360), for uids of allowed apps.
 */
function addDimsPeople(s: AnalyticsStore, appOk: Uint8Array, cellOk: Uint8Array, sb: DimsPeople, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { dOff, ids, sums } = sb;
  const idApp = s.idApp;
  for (let d = 0; d < 360; d++) {
    if (cellOk[d] === 0) continue;
    for (let q = dOff![d], n = dOff![d + 1]; q < n; q++) {
      const u = ids[q];
      if (appOk[idApp[u]] !== 1) continue;
      const o = q * ROW;
      listed[u] += sums[o];
      if (!withMinutes) continue;
      const k = u * ROW;
      acc[k + 1] += sums[o + 1];
      acc[k + 2] += sums[o + 2];
      acc[k + 3] += sums[o + 3];
      acc[k + 4] += sums[o + 4];
      acc[k + 5] += sums[o + 5];
      if (sums[o + 6] < acc[k + 6]) acc[k + 6] = sums[o + 6];
      if (sums[o + 7] > acc[k + 7]) acc[k + 7] = sums[o + 7];
    }
  }
}

/** Adds a block's sums of the uids of allowed apps. */
function addPeopleBlock(s: AnalyticsStore, appOk: Uint8Array, blk: PeopleBlock, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { ids, sums } = blk;
  const idApp = s.idApp;
  for (let q = 0, n = ids!.length; q < n; q++) {
    const u = ids![q];
    if (appOk[idApp[u]] !== 1) continue;
    const o = q * ROW;
    listed[u] += sums[o];
    if (!withMinutes) continue;
    const k = u * ROW;
    for (let c = 1; c < 6; c++) acc[k + c] += sums[o + c];
    if (sums[o + 6] < acc[k + 6]) acc[k + 6] = sums[o + 6];
    if (sums[o + 7] > acc[k + 7]) acc[k + 7] = sums[o + 7];
  }
}

function peopleSums(s: AnalyticsStore, listed: Int32Array, acc: Float64Array, withMinutes: boolean): PeopleSums {
  const U = listed.length;
  const W = withMinutes ? U : 0;
  let n = 0;
  for (let u = 0; u < U; u++) if (listed[u] > 0) n++;
  const ids = new Int32Array(n);
  n = 0;
  for (let u = 0; u < U; u++) if (listed[u] > 0) ids[n++] = u;
  const joined = new Int32Array(W), unanswered = new Int32Array(W);
  const audio = new Float64Array(W), video = new Float64Array(W), total = new Float64Array(W);
  const first = new Float64Array(W), last = new Float64Array(W);
  if (withMinutes) {
    for (const u of ids) {
      const k = u * ROW;
      joined[u] = acc[k + 1];
      unanswered[u] = acc[k + 2];
      audio[u] = acc[k + 3] / s.pAudio.scale;
      video[u] = acc[k + 4] / s.pVideo.scale;
      total[u] = acc[k + 5] / s.pTotal.scale;
      first[u] = acc[k + 6];
      last[u] = acc[k + 7];
    }
  }
  return { store: s, ids, listed, joined, unanswered, audio, video, total, first, last };
}

/** Matching calls' count and earliest / latest start (the daily report's extent when from/to are open). */
export function startExtentOf(db: Db, f: Filters, appPks: number[] | "all"): { count: number; min: number; max: number } {
  const { s, appOk, cellOk, from, to, pc, uidIds, none } = compile(db, f, appPks);
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  let count = 0, min = Infinity, max = -Infinity;
  for (let i = 0, n = none ? 0 : s.n; i < n; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    count++;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return { count, min, max };
}

/** Per local day: calls, audio and video (minutes), duration seconds, participants. */
export interface DaySums {
  calls: Float64Array;
  audio: Float64Array;
  video: Float64Array;
  durS: Float64Array;
  parts: Float64Array;
}

/**
 * Sums by local day of the matching calls in one pass: day d (0-based from `firstDay`)
 * of start t is floor((t + offset) / 86400) − firstDay, the offset being that of the
 * segment holding t (`bounds[k]` starts segment k + 1). Calls outside [0, days) are left out.
 */
export function dailyOf(db: Db, f: Filters, appPks: number[] | "all", firstDay: number, days: number, bounds: number[], offsets: number[]): DaySums {
  const plan = compile(db, f, appPks);
  const { s, cellOk, from, to, pc, uidIds, none } = plan;
  const out: DaySums = { calls: new Float64Array(days), audio: new Float64Array(days), video: new Float64Array(days), durS: new Float64Array(days), parts: new Float64Array(days) };
  if (none) return out;
  // Unfiltered but for apps and time, in a zone whose offsets and changes fall on quarter
  // hours (a quarter's calls share a local day), with minutes summed exactly in any
  // order: a block inside the window adds its per-quarter sums.
  const quarterly =
    uidIds === undefined && pc < 0 && cellOk.every((x) => x === 1) && offsets.every((o) => o % 900 === 0) && bounds.every((b) => b % 900 === 0) &&
    sumsExact(s.audio, s.n) && sumsExact(s.video, s.n);
  const bits = s.blockBits;
  const full = s.n >> bits;
  for (let b = 0; b < full; b++) {
    if (!(s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to)) continue; // no start of the block in the window
    if (quarterly) {
      const qb = quarterBlock(s, b);
      if (qb.sums !== null && qb.minStart >= from && qb.maxStart < to) {
        addQuarterBlock(plan.appOk, qb, out, firstDay, days, bounds, offsets);
        continue;
      }
    }
    const lo = b << bits;
    dailySlots(plan, lo, lo + (1 << bits), out, firstDay, days, bounds, offsets);
  }
  const tail = full << bits;
  dailySlots(plan, tail, s.n, out, firstDay, days, bounds, offsets);
  const { audio: au, video: vi } = out;
  for (let d = 0; d < days; d++) {
    au[d] /= s.audio.scale;
    vi[d] /= s.video.scale;
  }
  return out;
}

/** Whether sums of any n values of a minutes column, in any order, are exact (integer thousandths). */
function sumsExact(c: { scale: number; maxAbs: number }, n: number): boolean {
  return c.scale === 1000 && n * c.maxAbs <= Number.MAX_SAFE_INTEGER;
}

/** dailyOf's sums of the matching calls among slots [lo, hi), slot by slot (minutes in the columns' units). */
function dailySlots(plan: Plan, lo: number, hi: number, out: DaySums, firstDay: number, days: number, bounds: number[], offsets: number[]): void {
  const { s, appOk, cellOk, from, to, pc, uidIds } = plan;
  const { calls, audio: au, video: vi, durS, parts } = out;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const nApps = appOk.length;
  const nb = bounds.length;
  const off0 = offsets[0];
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    const p = pcs[i];
    if (pc >= 0 && p !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    let off = off0;
    if (nb > 0) {
      let seg = 0;
      while (seg < nb && t >= bounds[seg]) seg++;
      off = offsets[seg];
    }
    const d = (((t + off) / 86_400) | 0) - firstDay; // positive: truncation is floor (see heatmapOf)
    if (d < 0 || d >= days) continue;
    calls[d]++;
    au[d] += audio[i];
    vi[d] += video[i];
    durS[d] += dur[i];
    parts[d] += p;
  }
}

/**
 * (app, quarter) pairs a block's sums may hold: 8,192 (40 bytes a pair: ~5% of a
 * 65,536-slot block's own bytes at most). Sparser blocks are scanned.
 */
const MAX_QUARTER_PAIRS = 8192;

/** Block b's sums per (app, quarter hour of start), built (one pass over its slots) if missing or stale. */
function quarterBlock(s: AnalyticsStore, b: number): QuarterBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.quarterBlocks[b];
  if (cached && cached.stamp === stamp) return cached;
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const app = s.app.a, start = s.start.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const { appIndex, apps, minStart, maxStart } = blockCalls(s, lo, hi);
  // Starts are positive epoch seconds (store.ts): int32 division by 900 is floor.
  const q0 = (minStart / 900) | 0;
  const nq = ((maxStart / 900) | 0) - q0 + 1;
  let sums: Float64Array | null = null;
  if (apps.length * nq <= MAX_QUARTER_PAIRS) {
    sums = new Float64Array(apps.length * nq * 5);
    for (let i = lo; i < hi; i++) {
      const ap = app[i];
      if (ap === 0) continue;
      const o = (appIndex[ap] * nq + ((start[i] / 900) | 0) - q0) * 5;
      sums[o]++;
      sums[o + 1] += audio[i];
      sums[o + 2] += video[i];
      sums[o + 3] += dur[i];
      sums[o + 4] += pcs[i];
    }
  }
  const qb: QuarterBlock = { stamp, q0, nq, apps: Int32Array.from(apps), sums, minStart, maxStart };
  s.quarterBlocks[b] = qb;
  return qb;
}

/** Adds a block's per-quarter sums of the allowed apps to the days (the offset of a quarter is that at its start). */
function addQuarterBlock(appOk: Uint8Array, qb: QuarterBlock, out: DaySums, firstDay: number, days: number, bounds: number[], offsets: number[]): void {
  const { calls, audio: au, video: vi, durS, parts } = out;
  const sums = qb.sums!;
  const nb = bounds.length;
  for (let a = 0; a < qb.apps.length; a++) {
    const ap = qb.apps[a];
    if (ap >= appOk.length || appOk[ap] === 0) continue;
    let seg = 0;
    for (let q = 0; q < qb.nq; q++) {
      const o = (a * qb.nq + q) * 5;
      if (sums[o] === 0) continue;
      const t = (qb.q0 + q) * 900;
      while (seg < nb && t >= bounds[seg]) seg++;
      const d = Math.floor((t + offsets[seg]) / 86_400) - firstDay;
      if (d < 0 || d >= days) continue;
      calls[d] += sums[o];
      au[d] += sums[o + 1];
      vi[d] += sums[o + 2];
      durS[d] += sums[o + 3];
      parts[d] += sums[o + 4];
    }
  }
}

/**
 * The heatmap's counts (weekday × 24 + hour) in one pass over the matching calls (start
 * not filtered: the window bounds the hours examined). Quarter q of the window [qLo, qHi)
 * has its local hour's cell in `cellQ[q − qLo]`, and `nextStart[q − qLo]` is the first
 * quarter ≥ q that starts a local hour (qHi past the last): a call counts in its start
 * hour, then in every local hour start it runs past, up to `maxCrossings` quarters.
 */
export function heatmapOf(
  db: Db, f: Filters, appPks: number[] | "all", qLo: number, qHi: number, cellQ: Uint8Array, nextStart: Int32Array, maxCrossings: number,
): Float64Array {
  const plan = compile(db, f, appPks, { ignoreTime: true });
  const { s, cellOk, pc, uidIds, none } = plan;
  const counts = new Float64Array(7 * 24);
  if (none) return counts;
  // Unfiltered but for apps: a block adds its per-quarter counts (HeatBlock) instead of its slots.
  const blocks = uidIds === undefined && pc < 0 && cellOk.every((x) => x === 1);
  const bits = s.blockBits;
  const full = s.n >> bits;
  for (let b = 0; b < full; b++) {
    if (blocks) {
      const hb = heatBlock(s, b, maxCrossings);
      if (hb.starts !== null) {
        addHeatBlock(plan.appOk, hb, counts, qLo, qHi, cellQ, nextStart);
        continue;
      }
    }
    const lo = b << bits;
    heatSlots(plan, lo, lo + (1 << bits), counts, qLo, qHi, cellQ, nextStart, maxCrossings);
  }
  const tail = full << bits;
  heatSlots(plan, tail, s.n, counts, qLo, qHi, cellQ, nextStart, maxCrossings);
  return counts;
}

/** heatmapOf's counts of the matching calls among slots [lo, hi), slot by slot. */
function heatSlots(
  plan: Plan, lo: number, hi: number, counts: Float64Array, qLo: number, qHi: number, cellQ: Uint8Array, nextStart: Int32Array, maxCrossings: number,
): void {
  const { s, appOk, cellOk, pc, uidIds } = plan;
  const app = s.app.a, start = s.start.a, span = s.span.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0 || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    const t = start[i];
    // Starts are positive epoch seconds (a call has one, store.ts) and spans ≥ 0: an int32
    // division truncates like floor here, and by a constant it compiles to a multiply.
    const q0 = (t / 900) | 0;
    if (q0 >= qHi) continue;
    const end = Math.max(q0, Math.min(((t + span[i] - 1) / 900) | 0, q0 + maxCrossings));
    if (end < qLo) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    const last = end < qHi ? end : qHi - 1;
    if (q0 >= qLo) counts[cellQ[q0 - qLo]]++;
    for (let q = nextStart[(q0 + 1 > qLo ? q0 + 1 : qLo) - qLo]; q <= last; q = nextStart[q + 1 - qLo]) counts[cellQ[q - qLo]]++;
  }
}

/** Quarters (start and run ranges, times apps) a block's heatmap counts may span: beyond, it is scanned. */
const MAX_HEAT_QUARTERS = 16_384;

/** Block b's heatmap counts per (app, quarter), built (one pass over its slots) if missing or stale. */
function heatBlock(s: AnalyticsStore, b: number, maxCrossings: number): HeatBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.heatBlocks[b];
  if (cached && cached.stamp === stamp && cached.maxCrossings === maxCrossings) return cached;
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const app = s.app.a, start = s.start.a, span = s.span.a;
  const { appIndex, apps, minStart, maxStart } = blockCalls(s, lo, hi);
  const qMin = (minStart / 900) | 0, qMax = (maxStart / 900) | 0; // as in heatSlots
  let endMax = -Infinity;
  for (let i = lo; i < hi; i++) {
    if (app[i] === 0) continue;
    const t = start[i];
    const q0 = (t / 900) | 0;
    const end = Math.max(q0, Math.min(((t + span[i] - 1) / 900) | 0, q0 + maxCrossings));
    if (end > endMax) endMax = end;
  }
  const A = apps.length;
  const hb: HeatBlock = { stamp, maxCrossings, apps: Int32Array.from(apps), q0: 0, nq: 0, r0: 0, nr: 0, starts: null, runs: null };
  if (A > 0) {
    hb.q0 = qMin;
    hb.nq = qMax - qMin + 1;
    // Runs cover quarters q0 + 1 … end of each call: [qMin + 1, endMax], and one more
    // where the last runs' differences end (0 once summed).
    hb.r0 = qMin + 1;
    hb.nr = endMax - qMin + 1;
  }
  if (A > 0 && A * (hb.nq + hb.nr) <= MAX_HEAT_QUARTERS) {
    const starts = new Float64Array(A * hb.nq);
    // Runs as differences first (+1 where a run begins, −1 past its end), then summed.
    const runs = new Float64Array(A * hb.nr);
    for (let i = lo; i < hi; i++) {
      const ap = app[i];
      if (ap === 0) continue;
      const a = appIndex[ap];
      const t = start[i];
      const q0 = (t / 900) | 0;
      const end = Math.max(q0, Math.min(((t + span[i] - 1) / 900) | 0, q0 + maxCrossings));
      starts[a * hb.nq + q0 - hb.q0]++;
      if (end > q0) {
        runs[a * hb.nr + q0 + 1 - hb.r0]++;
        runs[a * hb.nr + end + 1 - hb.r0]--;
      }
    }
    for (let a = 0; a < A; a++) {
      let run = 0;
      for (let r = 0; r < hb.nr; r++) {
        run += runs[a * hb.nr + r];
        runs[a * hb.nr + r] = run;
      }
    }
    hb.starts = starts;
    hb.runs = runs;
  }
  s.heatBlocks[b] = hb;
  return hb;
}

/** Adds a block's counts of the allowed apps within the window's quarters [qLo, qHi). */
function addHeatBlock(appOk: Uint8Array, hb: HeatBlock, counts: Float64Array, qLo: number, qHi: number, cellQ: Uint8Array, nextStart: Int32Array): void {
  const starts = hb.starts!, runs = hb.runs!;
  for (let a = 0; a < hb.apps.length; a++) {
    const ap = hb.apps[a];
    if (ap >= appOk.length || appOk[ap] === 0) continue;
    for (let q = Math.max(qLo, hb.q0), e = Math.min(qHi, hb.q0 + hb.nq); q < e; q++) counts[cellQ[q - qLo]] += starts[a * hb.nq + q - hb.q0];
    // A run counts at each local hour start it passes.
    const r = Math.max(qLo, hb.r0);
    if (r >= qHi) continue;
    for (let q = nextStart[r - qLo], e = Math.min(qHi, hb.r0 + hb.nr); q < e; q = nextStart[q + 1 - qLo]) counts[cellQ[q - qLo]] += runs[a * hb.nr + q - hb.r0];
  }
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
