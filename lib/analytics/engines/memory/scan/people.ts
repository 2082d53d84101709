import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { SUPER_SHIFT, type AnalyticsStore, type DimsPeople, type PeopleBlock } from "../store/store";
import { blockCalls, inWindow, walkBlocks } from "./blocks";
import { addDimsPeople, dimsPeople, dimsPeopleHead } from "./dims-people";
import { allAppsAllowed, countDimsEntries, dimsEntries, dimsEntriesApply } from "./dims-entries";
import { completeDeferred, newDeferred, scanDeferred, type Deferred } from "./people-deferred";
import { newPeopleAcc, peopleScratch, resetPeopleRow } from "./people-rows";

/** Doubles per uid row: a local constant on purpose (people-rows.ts ROW says why). */
const ROW = 8;
import { runsInHours } from "../../../running-hours";
import { compile, listsUid, type Plan } from "./plan";

/**
 * Per participant (uid id) over the matching calls: the participants and engagement
 * reports. Block sums per uid (PeopleBlock) where no categorical filter applies, the
 * superblocks' sums per (dims code, uid) (dims-people.ts) where one does.
 */

/**
 * What a caller needs: every sum of every uid ("all": the CSV), calls per uid only
 * ("calls": engagement), or a page of rows ("page", "page-minutes": calls — and total
 * minutes, for `sort=minutes` — of every uid to order them, the other sums only of the
 * uids `complete` is given: people-deferred.ts).
 */
export type PeopleNeed = "all" | "calls" | "page" | "page-minutes";

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
  /**
   * Makes every sum of these uid ids whole (a page's: the "page" needs leave all but
   * `listed` — and `total` for "page-minutes" — partial where entries were scanned);
   * nothing to do for the other needs.
   */
  complete(ids: ArrayLike<number>): void;
}

/**
 * Per uid id over the matching calls (what the participants report, `withMinutes`, and
 * engagement, calls per uid only, aggregate). uid ids index plain typed arrays — a few
 * thousand entries, cache-resident.
 *
 * The pass over the entries is bound by memory bandwidth (17 bytes an entry, ~3 entries
 * a call: reading them alone is most of the time), so where the filter keeps every call
 * of a block of 65,536 slots — no categorical, participants-count or uid filter, the
 * block's starts inside [from, to); the app filter applies per uid id, ids being per
 * app — the block's per-uid sums (store/store.ts PeopleBlock, built by one unfiltered pass
 * and kept until a slot of the block changes) are added instead of its entries. Exact:
 * counts, minima and maxima do not depend on order, and minutes held as integer
 * thousandths sum to the same integer in any order while n × maxAbs ≤ 2^53 (checked;
 * otherwise, or for minutes held as plain doubles, every entry is added in slot order
 * as before).
 */
export function peopleOf(db: Db, f: Filters, appPks: number[] | "all", need: PeopleNeed = "all"): PeopleSums {
  const plan = compile(db, f, appPks);
  const { s, cellOk, pc, uidIds, hours, none } = plan;
  const U = s.idUid.length;
  const withMinutes = need !== "calls";
  const W = withMinutes ? U : 0;
  const listed = new Int32Array(U);
  // One row of ROW doubles per uid (listed unused, joined, unanswered, audio, video,
  // total, first, last): an entry touches one cache line, not seven arrays.
  const acc = newPeopleAcc(W);
  if (none) return peopleSums(plan, listed, acc, withMinutes, null);
  const exact = blockSumsExact(s);
  const sumsApply = uidIds === undefined && hours === undefined && pc < 0 && (!withMinutes || exact);
  // A page: the scanned entries add calls (and total minutes) only; the rest waits for the page's uids.
  const deferred = (need === "page" || need === "page-minutes") && exact ? newDeferred(U, need === "page-minutes") : null;
  const scan = (lo: number, hi: number) => scanPeople(plan, lo, hi, listed, acc, withMinutes, deferred);
  if (sumsApply && cellOk.every((x) => x === 1)) {
    walkBlocks(plan, {
      bits: s.blockBits,
      window: false, // scanPeople leaves out the blocks outside the window itself
      sums: (b) => {
        const blk = peopleBlock(s, b);
        return blk.ids !== null && inWindow(plan, blk) ? blk : undefined;
      },
      add: (blk) => addPeopleBlock(s, plan.appOk, blk, listed, acc, withMinutes),
      scan,
    });
  } else if (sumsApply) {
    // Categorical filters only: a superblock's sums per (dims code, uid) hold the answer
    // for any of them (a filter keeps or drops whole dims codes); the unfilled last
    // superblock's full blocks have sums of their own, and only the slots past them are scanned.
    const superBits = s.blockBits + SUPER_SHIFT;
    const add = (sb: DimsPeople) => addDimsPeople(s, plan.appOk, cellOk, sb, listed, acc, withMinutes);
    walkBlocks(plan, {
      bits: superBits,
      window: false,
      sums: (g) => {
        const sb = dimsPeople(s, g);
        return sb.dOff !== null && inWindow(plan, sb) ? sb : undefined;
      },
      add,
      scan: (lo, hi) => {
        const filled = (s.n >> s.blockBits) << s.blockBits;
        if (lo === (s.n >> superBits) << superBits && filled > lo) {
          const head = dimsPeopleHead(s, lo, filled);
          if (head.dOff !== null && inWindow(plan, head)) {
            add(head);
            scan(filled, hi);
            return;
          }
        }
        scan(lo, hi);
      },
    });
  } else scan(0, s.n);
  return peopleSums(plan, listed, acc, withMinutes, deferred);
}

/** Whether the participants' minutes are integer thousandths whose sums, in any order, are exact. */
function blockSumsExact(s: AnalyticsStore): boolean {
  const cols = [s.pAudio, s.pVideo, s.pTotal];
  return cols.every((c) => c.scale === 1000 && s.m * c.maxAbs <= Number.MAX_SAFE_INTEGER);
}

/**
 * Adds the entries of the matching calls among slots [lo, hi): entry by entry in slot
 * order, or where only calls per uid are added (engagement, a page by calls) under
 * categorical filters alone, a full block inside the window by its entries grouped by
 * dims code (dims-entries.ts).
 */
function scanPeople(plan: Plan, lo: number, hi: number, listed: Int32Array, acc: Float64Array, withMinutes: boolean, deferred: Deferred | null): void {
  const { s, from, to } = plan;
  const grouped = plan.pc < 0 && plan.uidIds === undefined && plan.hours === undefined && (deferred ? deferred.total === null : !withMinutes) && dimsEntriesApply(s);
  const allApps = grouped && allAppsAllowed(plan);
  const full = s.n >> s.blockBits;
  // Block by block, leaving out those whose starts all lie outside the window.
  const size = 1 << s.blockBits;
  for (let a = lo; a < hi; ) {
    const b = a >> s.blockBits;
    const e = Math.min(hi, (b + 1) * size);
    if (!(s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to)) {
      a = e;
      continue;
    }
    // Whole block, every start inside the window (the bounds may be loose, never narrow).
    if (grouped && b < full && e - a === size && s.blockMinStart[b]! >= from && s.blockMaxStart[b]! < to) {
      countDimsEntries(plan, allApps, dimsEntries(s, b), listed);
      deferred?.blocks.push(b);
    } else if (deferred !== null) scanDeferred(plan, a, e, listed, deferred);
    else scanPeopleSlots(plan, a, e, listed, acc, withMinutes);
    a = e;
  }
}

function scanPeopleSlots(plan: Plan, lo: number, hi: number, listed: Int32Array, acc: Float64Array, withMinutes: boolean): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
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
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
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

/** Block b's per-uid sums, built (one unfiltered pass over its slots) if missing or stale. */
export function peopleBlock(s: AnalyticsStore, b: number): PeopleBlock {
  const stamp = s.blockStamp[b] ?? 0;
  const cached = s.peopleBlocks[b];
  if (cached && cached.stamp === stamp) return cached;
  const { listed: blockListed, acc: blockAcc } = peopleScratch(s.idUid.length);
  const lo = b << s.blockBits, hi = lo + (1 << s.blockBits);
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a;
  const { minStart, maxStart } = blockCalls(s, lo, hi);
  sumPeopleEntries(s, lo, hi, blockListed, blockAcc);
  // The uids listed, each once (listed turned negative once taken).
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
  // In id order: adding a block then walks the report's rows forward (prefetched), not at
  // random (with tens of thousands of uids, 64 bytes each, that was a cache miss a uid).
  const sorted = Int32Array.from(ids).sort();
  const sums = new Float64Array(keep ? sorted.length * ROW : 0);
  for (let q = 0; q < sorted.length; q++) {
    const u = sorted[q], k = u * ROW, o = q * ROW;
    if (keep) {
      sums[o] = -blockListed[u];
      for (let c = 1; c < ROW; c++) sums[o + c] = blockAcc[k + c];
    }
    resetPeopleRow(u);
  }
  const blk: PeopleBlock = { stamp, ids: keep ? sorted : null, sums, minStart, maxStart };
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

function peopleSums(plan: Plan, listed: Int32Array, acc: Float64Array, withMinutes: boolean, deferred: Deferred | null): PeopleSums {
  const s = plan.s;
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
  const fill = (us: ArrayLike<number>) => {
    for (let q = 0; q < us.length; q++) {
      const u = us[q], k = u * ROW;
      joined[u] = acc[k + 1];
      unanswered[u] = acc[k + 2];
      audio[u] = acc[k + 3] / s.pAudio.scale;
      video[u] = acc[k + 4] / s.pVideo.scale;
      total[u] = acc[k + 5] / s.pTotal.scale;
      first[u] = acc[k + 6];
      last[u] = acc[k + 7];
    }
  };
  if (withMinutes) fill(ids);
  // "page-minutes": the order reads every uid's total minutes (exact integer thousandths, so the sum's order does not matter).
  const dTotal = deferred?.total;
  if (dTotal) for (const u of ids) total[u] = (acc[u * ROW + 5] + dTotal[u]) / s.pTotal.scale;
  const done = deferred ? new Uint8Array(U) : null;
  const complete = (us: ArrayLike<number>) => {
    if (!deferred || !done) return;
    const todo = Array.from(us).filter((u) => done[u] === 0 && listed[u] > 0);
    for (const u of todo) done[u] = 1;
    completeDeferred(plan, deferred, todo, acc);
    fill(todo);
  };
  return { store: s, ids, listed, joined, unanswered, audio, video, total, first, last, complete };
}
