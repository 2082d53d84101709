import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import type { CubeBlock } from "../store/store";
import { CELLS, DIMS, RECORDING_WEIGHT } from "./cell-codec";
import { eachCubePart } from "./cube";
import { runsInHours } from "../../../running-hours";
import { compile, listsUid, type Plan } from "./plan";

/** Per tenant app: the cube's block sums keyed by app, and the distinct participants of each app. */

/** The cell codec's constants as module constants: an imported binding is re-loaded on every use in a loop. */
const REC_WEIGHT = RECORDING_WEIGHT;
const D = DIMS;

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
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    calls[ap]++;
    au[ap] += audio[i];
    vi[ap] += video[i];
    if (c % D >= REC_WEIGHT) rec[ap]++;
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
    if (c % D >= REC_WEIGHT) rec[ap] += sums[o];
  }
}

/** Distinct uids listed in the matching calls, per app (uid ids are per app). */
function appPeople(plan: Plan, people: Float64Array): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
      if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
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
