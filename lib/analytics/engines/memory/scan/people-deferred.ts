import { visitDimsEntries } from "./dims-entries";
import { runsInHours } from "../../../running-hours";
import { listsUid, type Plan } from "./plan";

/**
 * The participants page's scan: calls per uid for every uid, the other sums for the
 * page's uids only (decision 0024).
 *
 * A page of the participants report orders every matching uid by calls (or by total
 * minutes, then calls) but shows 50 of them. Where the entries are scanned (a
 * categorical, participants-count or uid filter the block sums cannot stand in for), the
 * scan used to add all eight sums of every entry into a row of 64 bytes per uid: with
 * tens of thousands of uids (light-users: 42k, 2.7 MB of rows) most entries missed the
 * cache on their row, and those read-modify-writes were most of the report's time.
 * Here the first pass adds only what the order needs — calls per uid (4 bytes a uid),
 * and total minutes (8 more) when ordered by minutes, both small enough to stay in a
 * core's L2 cache — and keeps the matching slots. Once the page's uids are known,
 * `completeDeferred` walks those slots' entries again and adds the other sums of the
 * page's uids only.
 *
 * The minutes are then added in another order than entry by entry, so this applies only
 * where any order gives the same sums (integer thousandths, people.ts blockSumsExact);
 * the counts, minima and maxima do not depend on order.
 */

/** Doubles per uid row: a local constant on purpose (people-rows.ts ROW says why). */
const ROW = 8;

/**
 * What a page's scan matched — the slots it scanned (`slots[0..n)`) and the full blocks
 * it counted by their grouped entries (`blocks`, dims-entries.ts) — and whether it summed
 * total minutes (`total`, per uid id, thousandths) already.
 */
export interface Deferred {
  slots: Int32Array;
  n: number;
  blocks: number[];
  total: Float64Array | null;
}

export function newDeferred(uids: number, withTotal: boolean): Deferred {
  return { slots: new Int32Array(1 << 12), n: 0, blocks: [], total: withTotal ? new Float64Array(uids) : null };
}

/**
 * Counts the entries of the matching calls among slots [lo, hi) per uid (and adds their
 * total minutes where the order needs them), and keeps those slots for completeDeferred.
 * The same tests as people.ts scanPeopleSlots.
 */
export function scanDeferred(plan: Plan, lo: number, hi: number, listed: Int32Array, d: Deferred): void {
  const { s, appOk, cellOk, from, to, pc, uidIds, hours } = plan;
  const app = s.app.a, start = s.start.a, cell = s.cell.a, pcs = s.pc.a;
  const pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, pt = s.pTotal.a;
  const nApps = appOk.length;
  const total = d.total;
  let slots = d.slots, n = d.n;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap >= nApps || appOk[ap] === 0) continue;
    const t = start[i];
    if (t < from || t >= to || cellOk[cell[i]] === 0) continue;
    if (pc >= 0 && pcs[i] !== pc) continue;
    if (uidIds !== undefined && !listsUid(s, uidIds, i)) continue;
    if (hours !== undefined && !runsInHours(hours, s.start.a[i], s.span.a[i])) continue;
    if (n === slots.length) {
      const grown = new Int32Array(slots.length * 2);
      grown.set(slots);
      slots = grown;
    }
    slots[n++] = i;
    const e = pOff[i] + pLen[i];
    if (total === null) for (let j = pOff[i]; j < e; j++) listed[uid[j]]++;
    else {
      for (let j = pOff[i]; j < e; j++) {
        const u = uid[j];
        listed[u]++;
        total[u] += pt[j];
      }
    }
  }
  d.slots = slots;
  d.n = n;
}

/**
 * Adds the sums the deferred scan left out — joined, unanswered, audio, video (and total,
 * unless summed already) minutes, first and last start — of the uid ids `ids` (each
 * once) into their rows of `acc`, from the kept slots' entries.
 */
export function completeDeferred(plan: Plan, d: Deferred, ids: ArrayLike<number>, acc: Float64Array): void {
  const { s } = plan;
  const start = s.start.a, pOff = s.pOff.a, pLen = s.pLen.a, uid = s.uid.a, flags = s.flags.a;
  const pa = s.pAudio.a, pv = s.pVideo.a, pt = s.pTotal.a;
  const want = new Uint8Array(s.idUid.length);
  for (let q = 0; q < ids.length; q++) want[ids[q]] = 1;
  const addTotal = d.total === null;
  const add = (j: number, t: number) => {
    const u = uid[j];
    const fl = flags[j];
    const k = u * ROW;
    acc[k + 1] += fl & 1;
    acc[k + 2] += fl >> 1;
    acc[k + 3] += pa[j];
    acc[k + 4] += pv[j];
    if (addTotal) acc[k + 5] += pt[j];
    if (t < acc[k + 6]) acc[k + 6] = t;
    if (t > acc[k + 7]) acc[k + 7] = t;
  };
  const slots = d.slots;
  for (let q = 0, n = d.n; q < n; q++) {
    const i = slots[q];
    for (let j = pOff[i], e = j + pLen[i]; j < e; j++) if (want[uid[j]] === 1) add(j, start[i]);
  }
  // The grouped blocks name (slot, uid) pairs: the call lists that uid in one entry.
  for (const b of d.blocks) {
    visitDimsEntries(plan, s.dimsEntries[b]!, b, want, (i, u) => {
      let j = pOff[i];
      while (uid[j] !== u) j++;
      add(j, start[i]);
    });
  }
  if (d.total !== null) for (let q = 0; q < ids.length; q++) acc[ids[q] * ROW + 5] += d.total[ids[q]];
}
