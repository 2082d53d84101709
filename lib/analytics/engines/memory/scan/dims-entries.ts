import type { AnalyticsStore, DimsEntries } from "../store/store";
import { blockCalls } from "./blocks";
import { DIMS } from "./cell-codec";
import type { Plan } from "./plan";

/**
 * A block's participant entries grouped by dims code (decision 0024): what the
 * participants page and engagement read under a categorical filter where no block sums
 * answer it (light users: a uid's keys per (dims code, uid) hardly repeat, so the
 * superblocks' sums are dropped, dims-people.ts).
 *
 * A filter keeps or drops whole dims codes, so the entries of the calls it keeps in a
 * block are whole runs of `uid`: counted in one forward read of 4 bytes an entry, instead
 * of a test per call and a gather of each kept call's entries. `slot` (the call's slot,
 * from the block's first) lets a page's uids find their entries again (people-deferred.ts
 * completeDeferred). 6 bytes an entry, built by one counting sort of a full block when a
 * scan first needs it, kept until a slot of the block changes (its stamp).
 */

/** Dims codes: a local constant on purpose (people-rows.ts ROW says why). */
const D = DIMS;

/** Whether blocks of `s` can be grouped (slot offsets held in 16 bits). */
export function dimsEntriesApply(s: AnalyticsStore): boolean {
  return s.blockBits <= 16;
}

/** Block b's entries grouped by dims code, built if missing or stale (b a full block). */
export function dimsEntries(s: AnalyticsStore, b: number): DimsEntries {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.dimsEntries[b];
  if (cached && cached.stamp === stamp) return cached;
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const app = s.app.a, cell = s.cell.a, pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a;
  const dOff = new Int32Array(D + 1);
  for (let i = lo; i < hi; i++) if (app[i] !== 0) dOff[(cell[i] % D) + 1] += pLen[i];
  for (let d = 0; d < D; d++) dOff[d + 1] += dOff[d];
  const ids = new Int32Array(dOff[D]);
  const slot = new Uint16Array(dOff[D]);
  const fill = dOff.slice(0, D);
  for (let i = lo; i < hi; i++) {
    if (app[i] === 0) continue; // empty slot
    const d = cell[i] % D;
    let q = fill[d];
    for (let j = pOff[i], e = j + pLen[i]; j < e; j++, q++) {
      ids[q] = uid[j];
      slot[q] = i - lo;
    }
    fill[d] = q;
  }
  const { minStart, maxStart } = blockCalls(s, lo, hi);
  const blk: DimsEntries = { stamp, dOff, uid: ids, slot, minStart, maxStart };
  s.dimsEntries[b] = blk;
  return blk;
}

/** Adds, per uid id of an allowed app, the block's entries of the dims codes the plan keeps to `listed`. */
export function countDimsEntries(plan: Plan, allApps: boolean, blk: DimsEntries, listed: Int32Array): void {
  const { cellOk, appOk } = plan;
  const idApp = plan.s.idApp;
  const { dOff, uid } = blk;
  for (let d = 0; d < D; d++) {
    if (cellOk[d] === 0) continue;
    const e = dOff[d + 1];
    if (allApps) for (let q = dOff[d]; q < e; q++) listed[uid[q]]++;
    else {
      for (let q = dOff[d]; q < e; q++) {
        const u = uid[q];
        if (appOk[idApp[u]] === 1) listed[u]++;
      }
    }
  }
}

/**
 * Calls `visit(slot, u)` for every entry of the kept dims codes of block b whose uid id
 * is wanted (`want[u]` 1: a page's uids, all of allowed apps).
 */
export function visitDimsEntries(plan: Plan, blk: DimsEntries, b: number, want: Uint8Array, visit: (slot: number, u: number) => void): void {
  const { cellOk } = plan;
  const { dOff, uid, slot } = blk;
  const lo = b << plan.s.blockBits;
  for (let d = 0; d < D; d++) {
    if (cellOk[d] === 0) continue;
    for (let q = dOff[d], e = dOff[d + 1]; q < e; q++) {
      const u = uid[q];
      if (want[u] === 1) visit(lo + slot[q], u);
    }
  }
}

/** Whether every app the store holds is allowed by the plan (then no per-uid app test). */
export function allAppsAllowed(plan: Plan): boolean {
  const { appOk, s } = plan;
  for (let ap = 1; ap <= s.maxApp; ap++) if (appOk[ap] !== 1) return false;
  return true;
}
