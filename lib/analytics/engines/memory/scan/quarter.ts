import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { AnalyticsStore, QuarterBlock } from "../store/store";
import { blockCalls, inWindow, sumsExact, walkBlocks } from "./blocks";
import { runsInHours } from "../../../running-hours";
import { compile, listsUid, type Plan } from "./plan";

/**
 * Sums by local day (the daily report). Its block sums are per (app, quarter hour of
 * start) (QuarterBlock): in a zone whose offsets and changes fall on quarter hours a
 * quarter's calls share a local day.
 */

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
  const { s, cellOk, pc, uidIds, hours, none } = plan;
  const out: DaySums = { calls: new Float64Array(days), audio: new Float64Array(days), video: new Float64Array(days), durS: new Float64Array(days), parts: new Float64Array(days) };
  if (none) return out;
  // Unfiltered but for apps and time, in a zone whose offsets and changes fall on quarter
  // hours (a quarter's calls share a local day), with minutes summed exactly in any
  // order: a block inside the window adds its per-quarter sums.
  const quarterly =
    uidIds === undefined && hours === undefined && pc < 0 && cellOk.every((x) => x === 1) && offsets.every((o) => o % 900 === 0) && bounds.every((b) => b % 900 === 0) &&
    sumsExact(s.audio, s.n) && sumsExact(s.video, s.n);
  const onQuarters = offsets.every((o) => o % 900 === 0) && bounds.every((b) => b % 900 === 0);
  const exact = sumsExact(s.audio, s.n) && sumsExact(s.video, s.n);
  // Scanned slots find their day in a table per quarter hour (same zone condition as the blocks').
  const quarterDays = onQuarters ? dayOfQuarter(firstDay, days, bounds, offsets) : undefined;
  walkBlocks(plan, {
    bits: s.blockBits,
    window: true,
    sums: quarterly
      ? (b) => {
          const qb = quarterBlock(s, b);
          return qb.sums !== null && inWindow(plan, qb) ? qb : undefined;
        }
      : undefined,
    add: (qb) => addQuarterBlock(plan.appOk, qb, out, firstDay, days, bounds, offsets),
    scan: (lo, hi) =>
      quarterDays ? dailyQuarterSlots(plan, lo, hi, out, quarterDays, days, exact) : dailySlots(plan, lo, hi, out, firstDay, days, bounds, offsets),
  });
  const { audio: au, video: vi } = out;
  for (let d = 0; d < days; d++) {
    au[d] /= s.audio.scale;
    vi[d] /= s.video.scale;
  }
  return out;
}

/** dailyOf's sums of the matching calls among slots [lo, hi), slot by slot (minutes in the columns' units). */
function dailySlots(plan: Plan, lo: number, hi: number, out: DaySums, firstDay: number, days: number, bounds: number[], offsets: number[]): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
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

/** The local day (0-based from firstDay) of every quarter hour that can start one of the days: `day[q − q0]`. */
interface QuarterDays {
  q0: number;
  day: Int32Array;
}

/** The dashboard asks the same days again and again: the last few tables are kept. */
const quarterDaysCache = new Map<string, QuarterDays>();

/**
 * Days of quarters, in a zone whose offsets and changes fall on quarter hours (a
 * quarter's calls share a local day): the offset rule of dailySlots taken at the
 * quarter's start. Quarters from a day before the first to a day after the last (no
 * offset is a day): a start outside the table is outside the days.
 */
function dayOfQuarter(firstDay: number, days: number, bounds: number[], offsets: number[]): QuarterDays {
  const key = `${firstDay}|${days}|${bounds.join(",")}|${offsets.join(",")}`;
  const hit = quarterDaysCache.get(key);
  if (hit) return hit;
  const q0 = (firstDay - 1) * 96;
  const day = new Int32Array((days + 2) * 96);
  let seg = 0;
  for (let k = 0; k < day.length; k++) {
    const t = (q0 + k) * 900;
    while (seg < bounds.length && t >= bounds[seg]) seg++;
    day[k] = Math.floor((t + offsets[seg]) / 86_400) - firstDay;
  }
  const out = { q0, day };
  if (quarterDaysCache.size >= 8) quarterDaysCache.delete(quarterDaysCache.keys().next().value!);
  quarterDaysCache.set(key, out);
  return out;
}

/**
 * dailySlots with the day from the quarter's table, and a run of calls on the same day
 * (slots come roughly in start order) summed in locals before it is added to the day:
 * with minutes in integer thousandths (`exact`) the sums do not depend on order;
 * otherwise every call is added to its day at once, in slot order, as dailySlots does.
 */
function dailyQuarterSlots(plan: Plan, lo: number, hi: number, out: DaySums, qd: QuarterDays, days: number, exact: boolean): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const { q0, day } = qd;
  const nq = day.length;
  const nApps = appOk.length;
  // The current run: its day (−1: none) and sums.
  let rd = -1, rc = 0, ra = 0, rv = 0, rs = 0, rp = 0;
  for (let i = lo; i < hi; i++) {
    if (cellOk[cell[i]] === 0) continue;
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to) continue;
    const p = pcs[i];
    if (pc >= 0 && p !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    const q = ((t / 900) | 0) - q0; // positive starts: truncation is floor (see heatmapOf)
    if (q < 0 || q >= nq) continue;
    const d = day[q];
    if (d < 0 || d >= days) continue;
    if (d !== rd) {
      if (rd >= 0) addRun(out, rd, rc, ra, rv, rs, rp);
      rd = d;
      rc = ra = rv = rs = rp = 0;
    }
    rc++;
    ra += audio[i];
    rv += video[i];
    rs += dur[i];
    rp += p;
    if (!exact) {
      addRun(out, rd, rc, ra, rv, rs, rp);
      rd = -1;
    }
  }
  if (rd >= 0) addRun(out, rd, rc, ra, rv, rs, rp);
}

/** Adds a run's sums to day d. */
function addRun(out: DaySums, d: number, c: number, a: number, v: number, secs: number, p: number): void {
  out.calls[d] += c;
  out.audio[d] += a;
  out.video[d] += v;
  out.durS[d] += secs;
  out.parts[d] += p;
}

/**
 * (app, quarter) pairs a block's sums may hold: 8,192 (40 bytes a pair: ~5% of a
 * 65,536-slot block's own bytes at most). Sparser blocks are scanned.
 */
const MAX_QUARTER_PAIRS = 8192;

/** Block b's sums per (app, quarter hour of start), built (one pass over its slots) if missing or stale. */
export function quarterBlock(s: AnalyticsStore, b: number): QuarterBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.quarterBlocks[b];
  if (cached && cached.stamp === stamp) return cached;
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const app = s.app.a, start = s.start.a, pcs = s.pc.a, audio = s.audio.a, video = s.video.a, dur = s.dur.a;
  const { appIndex, apps, minStart, maxStart } = blockCalls(s, lo, hi);
  // Starts are positive epoch seconds (store/store.ts): int32 division by 900 is floor.
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
