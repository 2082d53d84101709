import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { SortKey } from "../../../report-registry";
import type { AnalyticsStore } from "../store/store";
import { analyticsStore } from "../store/load";
import { runsInHours } from "../../../running-hours";
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
  const { s, appOk, cellOk, from, to, pc, uidIds, hours, none } = compile(db, f, appPks, opts);
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    sel[count++] = i;
  }
  return { store: s, sel, count };
}


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
export function matchKeys(db: Db, f: Filters, appPks: number[] | "all", sort: SortKey, own = false, opts: SelectOptions = {}): KeyedSelection {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours, none } = compile(db, f, appPks, opts);
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
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
  const { s, appOk, cellOk, from, to, pc, uidIds, hours, none } = compile(db, f, appPks);
  const size = 1 << s.blockBits;
  const blocks = none ? 0 : Math.ceil(s.n / size);
  const lo = s.blockMinStart, hi = s.blockMaxStart;
  const visit = Array.from({ length: blocks }, (_, b) => b)
    .filter((b) => hi[b]! >= from && lo[b]! < to)
    .sort(desc ? (a, b) => hi[b]! - hi[a]! : (a, b) => lo[a]! - lo[b]!);
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  // The best n so far (in output order), then each block's matches after them.
  if (headScratch.length < size + n) headScratch = new Int32Array(size + n);
  const cand = headScratch;
  let kept = 0;
  for (const b of visit) {
    if (kept >= n) {
      const nth = start[cand[n - 1]]!;
      if (desc ? hi[b]! < nth : lo[b]! > nth) break;
    }
    let m = kept;
    for (let i = b * size, e = Math.min(s.n, i + size); i < e; i++) {
      const ap = app[i];
      if (ap >= nApps || appOk[ap] === 0) continue;
      const t = start[i];
      if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
      if (pc >= 0 && pcs[i] !== pc) continue;
      if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
      if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
      cand[m++] = i;
    }
    kept = bestInOrder(start, cand, m, n, desc);
  }
  return { store: s, slots: cand.slice(0, kept) };
}

/** startHead's candidates (a block's slots and the best so far). */
let headScratch = new Int32Array(0);

/**
 * Moves the best `n` of slots cand[0..m) — by (start, slot), or the reverse for `desc` — to
 * the front of `cand`, in that order; returns how many (min(n, m)). Only the slots whose
 * start is at least as good as the n-th best start are sorted: that start is found by
 * selection over the starts, not by sorting a block's 65,536 slots for 50 rows.
 */
function bestInOrder(start: ArrayLike<number>, cand: Int32Array, m: number, n: number, desc: boolean): number {
  const better = (a: number, b: number) => (desc ? start[b] - start[a] || b - a : start[a] - start[b] || a - b);
  if (m > n) {
    const keys = new Float64Array(m);
    for (let k = 0; k < m; k++) keys[k] = start[cand[k]];
    // The n-th best start: the n-th largest for desc, the n-th smallest otherwise.
    const nth = kthSmallest(keys, desc ? m - n : n - 1);
    let w = 0;
    for (let k = 0; k < m; k++) {
      const t = start[cand[k]];
      if (desc ? t >= nth : t <= nth) cand[w++] = cand[k];
    }
    m = w;
  }
  cand.subarray(0, m).sort(better);
  return Math.min(n, m);
}

/** The k-th smallest value of `a` (0-based), reordering `a` (Hoare's selection). */
export function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0, hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const x = a[i];
        a[i++] = a[j];
        a[j--] = x;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/** Earliest and latest start the store's blocks may hold (loose, never narrow: store.ts); null when it holds no call. */
export function storeStartBounds(db: Db): { min: number; max: number } | null {
  const s = analyticsStore(db);
  if (s.n === 0) return null;
  let min = Infinity, max = -Infinity;
  for (let b = 0, nb = Math.ceil(s.n / (1 << s.blockBits)); b < nb; b++) {
    const lo = s.blockMinStart[b], hi = s.blockMaxStart[b];
    if (lo !== undefined && lo < min) min = lo;
    if (hi !== undefined && hi > max) max = hi;
  }
  return min <= max ? { min, max } : null;
}

/** Matching calls' count and earliest / latest start (the daily report's extent when from/to are open). */
export function startExtentOf(db: Db, f: Filters, appPks: number[] | "all"): { count: number; min: number; max: number } {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours, none } = compile(db, f, appPks);
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    count++;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return { count, min, max };
}
