import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { AnalyticsStore, HeatBlock } from "../store/store";
import { blockCalls, walkBlocks } from "./blocks";
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
  const { s, cellOk, pc, uidIds, none } = plan;
  const counts = new Float64Array(7 * 24);
  if (none) return counts;
  // Unfiltered but for apps: a block adds its per-quarter counts (HeatBlock) instead of its slots.
  const blocks = uidIds === undefined && pc < 0 && cellOk.every((x) => x === 1);
  walkBlocks(plan, {
    bits: s.blockBits,
    window: false,
    sums: blocks
      ? (b) => {
          const hb = heatBlock(s, b, maxCrossings);
          return hb.starts !== null ? hb : undefined;
        }
      : undefined,
    add: (hb) => addHeatBlock(plan.appOk, hb, counts, qLo, qHi, cellQ, nextStart),
    scan: (lo, hi) => heatSlots(plan, lo, hi, counts, qLo, qHi, cellQ, nextStart, maxCrossings),
  });
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
