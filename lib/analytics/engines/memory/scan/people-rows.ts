/**
 * The participants' sums as rows of ROW doubles per uid id (listed unused, joined,
 * unanswered, audio, video, total minutes, first and last start): one cache line per
 * entry touched, not seven arrays — and the scratch rows the block builds sum into.
 */

/**
 * Doubles per uid in the participants' sums. Each file that indexes rows declares its own
 * `const ROW = 8` (people.ts, dims-people.ts) rather than importing this one: V8 folds a
 * local constant into the index arithmetic, while an imported binding is loaded on every
 * use, which cost the entry loop ~1.7×.
 */
export const ROW = 8;

export function newPeopleAcc(uids: number): Float64Array<ArrayBuffer> {
  const acc = new Float64Array(uids * ROW);
  for (let k = 0; k < acc.length; k += ROW) {
    acc[k + 6] = Infinity;
    acc[k + 7] = -Infinity;
  }
  return acc;
}

/** Scratch of the block builds: per uid id, zeroed again after each build. */
let blockListed = new Int32Array(0);
let blockAcc = new Float64Array(0);

/** The builds' scratch, sized for U uid ids (listed counts, and rows of ROW doubles). */
export function peopleScratch(U: number): { listed: Int32Array; acc: Float64Array } {
  if (blockListed.length < U) {
    blockListed = new Int32Array(Math.ceil(U * 1.25));
    blockAcc = newPeopleAcc(blockListed.length);
  }
  return { listed: blockListed, acc: blockAcc };
}

/** Returns uid u's scratch row to empty (as newPeopleAcc made it). */
export function resetPeopleRow(u: number): void {
  const k = u * ROW;
  blockListed[u] = 0;
  for (let c = 1; c < 6; c++) blockAcc[k + c] = 0;
  blockAcc[k + 6] = Infinity;
  blockAcc[k + 7] = -Infinity;
}
