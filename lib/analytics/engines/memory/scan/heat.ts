import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { AnalyticsStore, HeatBlock } from "../store/store";
import { blockCalls, walkBlocks } from "./blocks";
import { runsInHours } from "../../../running-hours";
import { compile, listsUid, type Plan } from "./plan";

/**
 * The heatmap's counts (weekday × hour of the calls running in each local hour). Its
 * block sums are per (app, quarter hour) (HeatBlock): calls starting in a quarter, and
 * calls running past its start.
 */

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
  const { none } = plan;
  const counts = new Float64Array(7 * 24);
  if (none) return counts;
  // Unfiltered but for apps: a block adds its per-quarter counts (HeatBlock) instead of its slots.
  walkHeatBlocks(plan, maxCrossings, {
    use: (hb) => hb.starts !== null,
    add: (hb) => addHeatBlock(plan.appOk, hb, counts, qLo, qHi, cellQ, nextStart),
    scan: (lo, hi) => heatSlots(plan, lo, hi, counts, qLo, qHi, cellQ, nextStart, maxCrossings),
  });
  return counts;
}

/** Walks the store: a block's HeatBlock stands in for its slots where the filter is on apps only and `use` accepts it. */
function walkHeatBlocks(plan: Plan, maxCrossings: number, w: { use: (hb: HeatBlock) => boolean; add: (hb: HeatBlock) => void; scan: (lo: number, hi: number) => void }): void {
  const { s, cellOk, pc, uidIds, hours } = plan;
  const blocks = uidIds === undefined && hours === undefined && pc < 0 && cellOk.every((x) => x === 1);
  walkBlocks(plan, {
    bits: s.blockBits,
    window: false,
    sums: blocks
      ? (b) => {
          const hb = heatBlock(s, b, maxCrossings);
          return w.use(hb) ? hb : undefined;
        }
      : undefined,
    add: w.add,
    scan: w.scan,
  });
}

/** heatmapOf's counts of the matching calls among slots [lo, hi), slot by slot. */
function heatSlots(
  plan: Plan, lo: number, hi: number, counts: Float64Array, qLo: number, qHi: number, cellQ: Uint8Array, nextStart: Int32Array, maxCrossings: number,
): void {
  const { s, appOk, cellOk, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    const last = end < qHi ? end : qHi - 1;
    if (q0 >= qLo) counts[cellQ[q0 - qLo]]++;
    for (let q = nextStart[(q0 + 1 > qLo ? q0 + 1 : qLo) - qLo]; q <= last; q = nextStart[q + 1 - qLo]) counts[cellQ[q - qLo]]++;
  }
}

/**
 * The matching calls (start not filtered) as the heatmap counts them, per quarter hour of
 * [a, b): `starts[q − a]` calls start in quarter q, `runs[q − a]` calls run past its
 * start (start quarter < q ≤ their last, at most `maxCrossings` after the start) — the
 * HeatBlock's shape, over the whole window — and the calls' extent (count, first start
 * quarter, last quarter counted), in one pass. A call costs two or three increments
 * whatever its length: no walk over the hours it runs past, and no second pass for the
 * extent when the window is open (`heatmap.ts` picks the window from it).
 */
export interface HeatQuarters {
  a: number;
  starts: Int32Array;
  runs: Int32Array;
  count: number;
  minQ: number;
  maxQ: number;
}

/**
 * heatQuartersOf over the window's quarters [a, b), or — `window` undefined, an open
 * from or to — over every quarter a call of the store can count in (from the blocks'
 * start bounds). Undefined where the blocks' per-app counts serve the filter (apps
 * only: heatmapOf) or where that range is longer than `maxQuarters`.
 */
export function heatQuartersOf(
  db: Db, f: Filters, appPks: number[] | "all", window: { a: number; b: number } | undefined, maxCrossings: number, maxQuarters: number,
): HeatQuarters | undefined {
  const plan = compile(db, f, appPks, { ignoreTime: true });
  const { s, cellOk, pc, uidIds, hours } = plan;
  if (uidIds === undefined && hours === undefined && pc < 0 && cellOk.every((x) => x === 1)) return undefined;
  let { a, b } = window ?? { a: 0, b: 0 };
  if (!window) {
    let lo = Infinity, hi = -Infinity;
    for (let k = 0, blocks = (s.n + (1 << s.blockBits) - 1) >> s.blockBits; k < blocks; k++) {
      if (s.blockMinStart[k]! < lo) lo = s.blockMinStart[k]!;
      if (s.blockMaxStart[k]! > hi) hi = s.blockMaxStart[k]!;
    }
    // Starts are positive (as in heatSlots): truncation is floor. An empty store: an empty range.
    [a, b] = lo <= hi ? [(lo / 900) | 0, ((hi / 900) | 0) + maxCrossings + 1] : [0, 0];
  }
  if (b - a > maxQuarters) return undefined;
  const n = Math.max(0, b - a);
  // Runs as differences first (+1 where a run begins, −1 past its end), then summed.
  const out: HeatQuarters = { a, starts: new Int32Array(n), runs: new Int32Array(n + 1), count: 0, minQ: Infinity, maxQ: -Infinity };
  if (plan.none) return out;
  heatQuarterSlots(plan, 0, s.n, out, b, maxCrossings);
  const runs = out.runs;
  for (let q = 1; q < n; q++) runs[q] += runs[q - 1];
  return out;
}

function heatQuarterSlots(plan: Plan, lo: number, hi: number, out: HeatQuarters, b: number, maxCrossings: number): void {
  const { s, appOk, cellOk, pc, uidIds, hours } = plan;
  const app = s.app.a, start = s.start.a, span = s.span.a, cell = s.cell.a, pcs = s.pc.a;
  const { a, starts, runs } = out;
  const nApps = appOk.length;
  let { count, minQ, maxQ } = out;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0 || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    const t = start[i];
    const q0 = (t / 900) | 0; // as in heatSlots
    if (q0 >= b) continue;
    const end = Math.max(q0, Math.min(((t + span[i] - 1) / 900) | 0, q0 + maxCrossings));
    if (end < a) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    count++;
    if (q0 < minQ) minQ = q0;
    if (end > maxQ) maxQ = end;
    if (q0 >= a) starts[q0 - a]++;
    const r = q0 + 1 > a ? q0 + 1 : a;
    const e = end + 1 < b ? end + 1 : b;
    if (r < e) {
      runs[r - a]++;
      runs[e - a]--;
    }
  }
  Object.assign(out, { count, minQ, maxQ });
}

/** The heatmap's counts (weekday × 24 + hour) of window [qLo, qHi) from per-quarter counts (quarters outside theirs: none). */
export function heatFromQuarters(h: HeatQuarters, qLo: number, qHi: number, cellQ: Uint8Array, nextStart: Int32Array): Float64Array {
  const counts = new Float64Array(7 * 24);
  const { a, starts, runs } = h;
  const b = a + starts.length;
  for (let q = Math.max(qLo, a), e = Math.min(qHi, b); q < e; q++) counts[cellQ[q - qLo]] += starts[q - a];
  // A run counts at each local hour start it passes.
  for (let q = nextStart[0]; q < qHi; q = nextStart[q + 1 - qLo]) if (q >= a && q < b) counts[cellQ[q - qLo]] += runs[q - a];
  return counts;
}

/**
 * The heatmap's window where from/to are open: the matching calls' (start not filtered)
 * first start quarter and last quarter counted, in one pass that allocates nothing.
 * Unfiltered but for apps, a block whose apps are all allowed gives its bounds from its
 * heatmap counts (HeatBlock: its first start quarter and last run quarter) instead.
 */
export function heatExtentOf(db: Db, f: Filters, appPks: number[] | "all", maxCrossings: number): { count: number; minQ: number; maxQ: number } {
  const plan = compile(db, f, appPks, { ignoreTime: true });
  const { appOk, none } = plan;
  const out = { count: 0, minQ: Infinity, maxQ: -Infinity };
  if (none) return out;
  walkHeatBlocks(plan, maxCrossings, {
    use: (hb) => hb.apps.length > 0 && hb.apps.every((ap) => ap < appOk.length && appOk[ap] === 1),
    add: (hb) => {
      out.count++;
      if (hb.q0 < out.minQ) out.minQ = hb.q0;
      // nr = last run quarter − q0 + 1 (heatBlock)
      if (hb.q0 + hb.nr - 1 > out.maxQ) out.maxQ = hb.q0 + hb.nr - 1;
    },
    scan: (lo, hi) => heatExtentSlots(plan, lo, hi, maxCrossings, out),
  });
  return out;
}

function heatExtentSlots(plan: Plan, lo: number, hi: number, maxCrossings: number, out: { count: number; minQ: number; maxQ: number }): void {
  const { s, appOk, cellOk, pc, uidIds, hours } = plan;
  const app = s.app.a, start = s.start.a, span = s.span.a, cell = s.cell.a, pcs = s.pc.a;
  const nApps = appOk.length;
  let { count, minQ, maxQ } = out;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0 || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    const t = start[i];
    const q0 = (t / 900) | 0; // as in heatSlots
    const end = Math.max(q0, Math.min(((t + span[i] - 1) / 900) | 0, q0 + maxCrossings));
    count++;
    if (q0 < minQ) minQ = q0;
    if (end > maxQ) maxQ = end;
  }
  Object.assign(out, { count, minQ, maxQ });
}

/** Quarters (start and run ranges, times apps) a block's heatmap counts may span: beyond, it is scanned. */
const MAX_HEAT_QUARTERS = 16_384;

/** Block b's heatmap counts per (app, quarter), built (one pass over its slots) if missing or stale. */
export function heatBlock(s: AnalyticsStore, b: number, maxCrossings: number): HeatBlock {
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
