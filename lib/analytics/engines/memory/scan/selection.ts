import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { AnalyticsStore } from "../store/store";
import { compile, listsUid, type SelectOptions } from "./plan";

/**
 * Selections: the slots of the calls matching a filter, materialised for the reports
 * that walk them more than once or in a second phase — a plain selection, the calls
 * list's matches with their sort keys, the first matches by start (from the blocks'
 * start bounds), and the matches' start extent. The fused kernels (cube.ts, quarter.ts,
 * heat.ts, people.ts) aggregate in the same pass and allocate none.
 */

export interface Selection {
  store: AnalyticsStore;
  /** Matching slots: sel[0..count). */
  sel: Int32Array;
  count: number;
}

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
 * start bounds (store/store.ts blockMinStart / blockMaxStart) and the walk stops once no block
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
