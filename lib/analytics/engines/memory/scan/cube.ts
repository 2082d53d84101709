import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { AnalyticsStore, CubeBlock } from "../store/store";
import { CELLS } from "./cell-codec";
import { blockCalls, CUBE_KEEP_RATIO, inWindow, keepAllSums, sumsExact, walkBlocks } from "./blocks";
import { runsInHours } from "../../../running-hours";
import { compile, listsUid, type Plan } from "./plan";

/**
 * The cube: per cell sums of the matching calls (calls, audio and video minutes,
 * duration seconds, participants) — totals, breakdowns, durations and the calls list's
 * count. Its block sums are per (app, cell) (CubeBlock): any categorical filter keeps or
 * drops whole keys.
 */

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

/** Number of matching calls (the calls list's total): the per-cell counts of `cellCountsOf` (block sums where the filter allows), summed. */
export function countMatching(db: Db, f: Filters, appPks: number[] | "all"): number {
  let count = 0;
  for (const n of cellCountsOf(db, f, appPks)) count += n;
  return count;
}

/**
 * Walks the slots for the cube's kernels: `slots` for ranges to scan, `block` for blocks
 * whose sums stand in (`minutes`: the caller adds minutes, which must then sum exactly).
 */
export function eachCubePart(plan: Plan, minutes: boolean, slots: (lo: number, hi: number) => void, block: (cb: CubeBlock) => void): void {
  const { s, pc, uidIds, hours } = plan;
  const sums = pc < 0 && uidIds === undefined && hours === undefined && (!minutes || (sumsExact(s.audio, s.n) && sumsExact(s.video, s.n)));
  walkBlocks(plan, {
    bits: s.blockBits,
    window: true,
    sums: sums
      ? (b) => {
          const cb = cubeBlock(s, b);
          return cb.sums !== null && inWindow(plan, cb) ? cb : undefined;
        }
      : undefined,
    add: block,
    scan: slots,
  });
}

function cubeSlots(plan: Plan, lo: number, hi: number, out: Cube): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    calls[c]++;
    au[c] += audio[i];
    vi[c] += video[i];
    durS[c] += dur[i];
    parts[c] += p;
  }
}

function cellCountSlots(plan: Plan, lo: number, hi: number, calls: Float64Array): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    calls[c]++;
  }
}

/** Block b's sums per (app, cell), built (one pass over its slots) if missing or stale. */
export function cubeBlock(s: AnalyticsStore, b: number): CubeBlock {
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
