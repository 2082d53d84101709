import type { AnalyticsStore, DimsPeople } from "../store/store";
import { SUPER_SHIFT } from "../store/store";
import { DIMS_KEEP_RATIO, keepAllSums } from "./blocks";
import { DIMS } from "./cell-codec";
import { peopleScratch, resetPeopleRow } from "./people-rows";

/** Doubles per uid row: a local constant on purpose (people-rows.ts ROW says why); the dims codes likewise. */
const ROW = 8;
const D = DIMS;

/**
 * The superblocks' participant sums per (dims code, uid id): what the participants and
 * engagement reports add under categorical filters (a filter keeps or drops whole dims
 * codes). A superblock is 2^SUPER_SHIFT blocks.
 */

/** Scratch of the superblock builds: slots grouped by dims code. */
let dimsSlots = new Int32Array(0);

/**
 * Superblock g's sums per (dims code, uid id), built if missing or stale: its slots
 * grouped by dims code (a counting sort), then per code one pass over those calls'
 * entries into the per-uid scratch, whose touched rows become the code's rows. Kept only
 * where a key stands for DIMS_KEEP_RATIO or more entries on average; else `dOff` is null.
 */
export function dimsPeople(s: AnalyticsStore, g: number): DimsPeople {
  const stamp = s.superStamp[g] ?? 0;
  const cached = s.dimsPeople[g];
  if (cached && cached.stamp === stamp) return cached;
  const lo = g << (s.blockBits + SUPER_SHIFT);
  const sb = buildDimsPeople(s, lo, lo + (1 << (s.blockBits + SUPER_SHIFT)), stamp);
  s.dimsPeople[g] = sb;
  return sb;
}

/**
 * The same sums over the full blocks of the last superblock, which the store has not
 * filled yet (slots [lo, hi), `hi` on a block boundary): without them a store of fewer
 * than 2^(blockBits + SUPER_SHIFT) calls (about 1M) had no superblock at all and every
 * categorical filter scanned its entries. Kept while the stamps of those blocks stand;
 * calls appended past them (the unfilled block) do not touch it.
 */
export function dimsPeopleHead(s: AnalyticsStore, lo: number, hi: number): DimsPeople {
  let key = "";
  for (let b = lo >> s.blockBits, e = hi >> s.blockBits; b < e; b++) key += `${s.blockStamp[b] ?? 0},`;
  const cached = s.dimsPeopleHead;
  if (cached && cached.lo === lo && cached.hi === hi && cached.key === key) return cached.sums;
  const sums = buildDimsPeople(s, lo, hi, 0);
  s.dimsPeopleHead = { lo, hi, key, sums };
  return sums;
}

function buildDimsPeople(s: AnalyticsStore, lo: number, hi: number, stamp: number): DimsPeople {
  const { listed: blockListed, acc: blockAcc } = peopleScratch(s.idUid.length);
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  const dOff = new Int32Array(D + 1);
  let entries = 0, minStart = Infinity, maxStart = -Infinity;
  for (let i = lo; i < hi; i++) {
    const t = start[i];
    if (t < minStart) minStart = t;
    if (t > maxStart) maxStart = t;
    if (app[i] === 0) continue; // empty slot
    dOff[(cell[i] % D) + 1]++;
    entries += pLen[i];
  }
  for (let d = 0; d < D; d++) dOff[d + 1] += dOff[d];
  if (dimsSlots.length < hi - lo) dimsSlots = new Int32Array(hi - lo);
  const fill = dOff.slice(0, D);
  for (let i = lo; i < hi; i++) if (app[i] !== 0) dimsSlots[fill[cell[i] % D]++] = i;
  const maxKeys = keepAllSums ? entries : Math.floor(entries / DIMS_KEEP_RATIO);
  const ids = new Int32Array(maxKeys);
  const sums = new Float64Array(maxKeys * ROW);
  const rowOff = new Int32Array(D + 1);
  const touched: number[] = [];
  let keys = 0;
  let kept = true;
  for (let d = 0; d < D && kept; d++) {
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
    // A code's rows in id order: adding them walks the report's rows forward (people.ts peopleBlock).
    if (kept) touched.sort((a, b) => a - b);
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
  return kept
    ? { stamp, dOff: rowOff, ids: ids.slice(0, keys), sums: sums.slice(0, keys * ROW), minStart, maxStart }
    : { stamp, dOff: null, ids: new Int32Array(0), sums: new Float64Array(0), minStart, maxStart };
}

/**
 * Adds a superblock's rows of the dims codes the filter keeps (`cellOk` of a code: a
 * filter's table depends on the dims code only, the cell codec's dimsOfCell), for uids of allowed apps.
 */
export function addDimsPeople(s: AnalyticsStore, appOk: Uint8Array, cellOk: Uint8Array, sb: DimsPeople, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { dOff, ids, sums } = sb;
  const idApp = s.idApp;
  for (let d = 0; d < D; d++) {
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
