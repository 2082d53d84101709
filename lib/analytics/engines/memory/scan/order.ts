/**
 * Ordering of matching calls by a sort key in memory — the calls list page and its CSV
 * (reports/calls.ts), formerly `ORDER BY <key> <dir>, pk <dir> LIMIT/OFFSET` over the sort
 * indexes of migration 0004.
 *
 * The order wanted is SQLite's: key ascending, ties by pk ascending (`desc` is the exact
 * reverse of that total order, pk being unique). Store slots are in pk order, so "ties
 * by pk" is "ties by slot", and a selection collected by walking the slots is already in
 * tie order. `sortWindow` keeps it that way: it is a stable MSD bucket sort on the key
 * (buckets by `floor((key − min) × scale)`, which is monotone in the key for any double,
 * integer or not), that only descends into the buckets holding the wanted positions —
 * so a page anywhere in the list costs about two passes over the matches (bucket ids,
 * then gathering one or two buckets), and the full order (the CSV) a few more.
 */

/** Ranges this small are finished by insertion sort. */
const SMALL = 32;
const MAX_BUCKETS = 1 << 16;

/** Scratch arrays reused across calls (one report runs at a time per thread). */
let tmpK = new Float64Array(0);
let tmpS = new Int32Array(0);
let bucketOf = new Int32Array(0);

function scratch(n: number): void {
  if (tmpK.length >= n) return;
  const cap = Math.max(n, Math.ceil(tmpK.length * 1.25));
  tmpK = new Float64Array(cap);
  tmpS = new Int32Array(cap);
  bucketOf = new Int32Array(cap);
}

/**
 * Allocates the sort's scratch for n keys now (the analytics worker, when it loads the
 * store: a server's memory is then known from its start, and its first sort of the calls
 * list — a CSV export, a page by minutes — does not grow it by 16 bytes a call). Returns
 * the scratch's bytes.
 */
export function reserveSortScratch(n: number): number {
  scratch(n);
  // Written once, so that the pages are the process's now (a fresh array is only
  // address space until first written: the first sort would still grow the RSS).
  tmpK.fill(0);
  tmpS.fill(0);
  bucketOf.fill(0);
  return tmpK.byteLength + tmpS.byteLength + bucketOf.byteLength;
}

/**
 * Reorders keys[0..n) and slots[0..n) (slots ascending within equal keys on entry) so
 * that positions [lo, hi) hold exactly the elements of those positions in the ascending
 * (key, slot) order, sorted. Positions outside [lo, hi) are left unspecified.
 */
export function sortWindow(keys: Float64Array, slots: Int32Array, n: number, lo: number, hi: number): void {
  lo = Math.max(0, lo);
  hi = Math.min(n, hi);
  if (hi <= lo) return;
  scratch(n);
  if (n >= SAMPLE_MIN && (hi - lo) * 64 <= n && sampleSelect(keys, slots, n, lo, hi)) return;
  sortRange(keys, slots, 0, n, lo, hi, 0);
}

const SAMPLE_MIN = 1 << 14;
const SAMPLES = 4096;
/** Sample positions of slack either side of the window's estimated place (~6 standard deviations of a quantile of 4,096). */
const SLACK = 200;

/**
 * A page's window in one pass: key bounds around the window are guessed from a sorted
 * sample, the keys below the lower bound are only counted and those within both are
 * gathered (in slot order, so ties stay in pk order); if the guess holds (the gathered
 * run covers the window) the run is sorted in place at its final offset. Returns false,
 * having changed nothing, when it does not: the caller then sorts the long way.
 */
function sampleSelect(K: Float64Array, S: Int32Array, n: number, lo: number, hi: number): boolean {
  const sample = new Float64Array(SAMPLES);
  for (let j = 0; j < SAMPLES; j++) sample[j] = K[Math.floor(((j + 0.5) * n) / SAMPLES)];
  sample.sort();
  const jLo = Math.floor((lo / n) * SAMPLES) - SLACK;
  const jHi = Math.ceil((hi / n) * SAMPLES) + SLACK;
  const kLo = jLo < 0 ? -Infinity : sample[jLo];
  const kHi = jHi >= SAMPLES ? Infinity : sample[jHi];
  const tK = tmpK, tS = tmpS;
  let below = 0;
  let c = 0;
  for (let i = 0; i < n; i++) {
    const k = K[i];
    if (k < kLo) below++;
    else if (k <= kHi) {
      tK[c] = k;
      tS[c++] = S[i];
    }
  }
  if (below > lo || below + c < hi) return false;
  // The gathered run holds ranks [below, below + c): put it there and finish on it alone.
  K.set(tK.subarray(0, c), below);
  S.set(tS.subarray(0, c), below);
  sortRange(K, S, below, below + c, lo, hi, 0);
  return true;
}

function sortRange(K: Float64Array, S: Int32Array, a: number, b: number, lo: number, hi: number, depth: number): void {
  const n = b - a;
  if (n <= SMALL) return insertionSort(K, S, a, b);
  let min = K[a];
  let max = min;
  for (let i = a + 1; i < b; i++) {
    const k = K[i];
    if (k < min) min = k;
    else if (k > max) max = k;
  }
  if (min === max) return; // all equal: already in slot order
  const B = Math.min(MAX_BUCKETS, Math.max(16, n >> 2));
  const scale = (B - 1) / (max - min);
  // Degenerate spreads (subnormal or infinite) or runaway depth: a plain comparison sort.
  if (!Number.isFinite(scale) || scale <= 0 || depth > 40) return comparisonSort(K, S, a, b);
  const counts = new Int32Array(B + 1);
  const bid = bucketOf;
  for (let i = a; i < b; i++) {
    let bk = Math.floor((K[i] - min) * scale);
    if (bk > B - 1) bk = B - 1;
    bid[i] = bk;
    counts[bk + 1]++;
  }
  for (let bk = 0; bk < B; bk++) counts[bk + 1] += counts[bk]; // counts[bk] = first offset of bucket bk
  // Buckets holding the wanted positions lo..hi-1 (offsets relative to a).
  let bLo = 0;
  while (counts[bLo + 1] <= lo - a) bLo++;
  let bHi = bLo;
  while (counts[bHi + 1] < hi - a) bHi++;
  if (bLo === bHi && counts[bLo + 1] - counts[bLo] === n) return comparisonSort(K, S, a, b); // no progress
  // Stable scatter of those buckets only, through the scratch arrays and back in place.
  const next = counts.slice(bLo, bHi + 1);
  const tK = tmpK, tS = tmpS;
  for (let i = a; i < b; i++) {
    const bk = bid[i];
    if (bk < bLo || bk > bHi) continue;
    const p = next[bk - bLo]++;
    tK[p] = K[i];
    tS[p] = S[i];
  }
  const from = counts[bLo];
  const to = counts[bHi + 1];
  K.set(tK.subarray(from, to), a + from);
  S.set(tS.subarray(from, to), a + from);
  for (let bk = bLo; bk <= bHi; bk++) {
    const s = a + counts[bk];
    const e = a + counts[bk + 1];
    if (e - s > 1) sortRange(K, S, s, e, Math.max(lo, s), Math.min(hi, e), depth + 1);
  }
}

/** Whether element i sorts after (k, s). */
function after(K: Float64Array, S: Int32Array, i: number, k: number, s: number): boolean {
  return K[i] > k || (K[i] === k && S[i] > s);
}

function insertionSort(K: Float64Array, S: Int32Array, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    const k = K[i];
    const s = S[i];
    let j = i - 1;
    while (j >= a && after(K, S, j, k, s)) {
      K[j + 1] = K[j];
      S[j + 1] = S[j];
      j--;
    }
    K[j + 1] = k;
    S[j + 1] = s;
  }
}

function comparisonSort(K: Float64Array, S: Int32Array, a: number, b: number): void {
  const idx = Array.from({ length: b - a }, (_, i) => a + i);
  idx.sort((x, y) => (K[x] < K[y] ? -1 : K[x] > K[y] ? 1 : S[x] - S[y]));
  const k = idx.map((i) => K[i]);
  const s = idx.map((i) => S[i]);
  K.set(k, a);
  S.set(s, a);
}

/**
 * Positions [lo, hi) of the ascending (key, slot) order of keys/slots[0..n), sorted, in
 * arrays of their own — keys and slots are left as they are (read only), so the whole
 * order can still be sorted from them afterwards (the calls CSV: its first rows go out
 * before the full order is sorted). Candidates are the keys between bounds guessed from
 * a sample (gathered in slot order, so ties stay in pk order); if the guess misses, a
 * copy of everything is sorted instead.
 */
export function windowCopy(keys: Float64Array, slots: Int32Array, n: number, lo: number, hi: number): { keys: Float64Array; slots: Int32Array } {
  lo = Math.max(0, lo);
  hi = Math.min(n, hi);
  if (hi <= lo) return { keys: new Float64Array(0), slots: new Int32Array(0) };
  const sample = new Float64Array(Math.min(SAMPLES, n));
  for (let j = 0; j < sample.length; j++) sample[j] = keys[Math.floor(((j + 0.5) * n) / sample.length)];
  sample.sort();
  const jLo = Math.floor((lo / n) * sample.length) - SLACK;
  const jHi = Math.ceil((hi / n) * sample.length) + SLACK;
  const kLo = jLo < 0 ? -Infinity : sample[jLo];
  const kHi = jHi >= sample.length ? Infinity : sample[jHi];
  // One pass: count the keys below the bounds, gather those within into the scratch
  // (sized for the full sort that follows anyway), then copy the run out of it.
  scratch(n);
  const tK = tmpK, tS = tmpS;
  let below = 0;
  let c = 0;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    if (k < kLo) below++;
    else if (k <= kHi) {
      tK[c] = k;
      tS[c++] = slots[i];
    }
  }
  let K: Float64Array, S: Int32Array, base: number;
  if (below <= lo && below + c >= hi) {
    K = tK.slice(0, c);
    S = tS.slice(0, c);
    base = below;
  } else {
    K = keys.slice(0, n);
    S = slots.slice(0, n);
    base = 0;
  }
  scratch(K.length);
  sortRange(K, S, 0, K.length, lo - base, hi - base, 0);
  return { keys: K.slice(lo - base, hi - base), slots: S.slice(lo - base, hi - base) };
}
