import type { AnalyticsStore } from "../store/store";
import type { Plan } from "./plan";

/**
 * What every kind of block sum shares. A block sum is one kind of pre-summed answer per
 * block (2^blockBits slots) or superblock of the store, built by one unfiltered pass
 * over its slots and kept until a slot of it changes (its stamp). Each kind is one unit
 * of the same shape — its sums' type (store/store.ts), `<kind>Block(s, b)` (built if missing or
 * stale), `add<Kind>Block` (adds one block's sums under a plan) and the kernel that walks
 * the store with them (`walkBlocks`): cube.ts, quarter.ts, heat.ts, people.ts,
 * dims-people.ts. The kernel adds a block's sums where the filter keeps or drops whole
 * keys of them, and scans the block's slots otherwise.
 */

/**
 * Entries a superblock's keys must stand for, on average, for its sums to be kept: 8
 * bounds their memory (68 bytes a key) to about a third of the entries' own (17 bytes
 * an entry), whatever the data.
 */
export const DIMS_KEEP_RATIO = 8;

/** Calls a block's cube keys must stand for, on average: fewer, and scanning costs about the same. */
export const CUBE_KEEP_RATIO = 4;

/** Tests: keep every superblock's and block's sums whatever their key count (the fixtures' few calls repeat little). */
export let keepAllSums = false;

export function setKeepAllSums(on: boolean): void {
  keepAllSums = on;
}

/** The apps holding calls in slots [lo, hi) (`appIndex[pk]` their index in `apps`, −1 for others) and the bounds of those calls' starts. */
export function blockCalls(s: AnalyticsStore, lo: number, hi: number): { appIndex: Int32Array; apps: number[]; minStart: number; maxStart: number } {
  const app = s.app.a, start = s.start.a;
  const appIndex = new Int32Array(s.maxApp + 1).fill(-1);
  const apps: number[] = [];
  let minStart = Infinity, maxStart = -Infinity;
  for (let i = lo; i < hi; i++) {
    const ap = app[i];
    if (ap === 0) continue; // empty slot
    if (appIndex[ap] < 0) {
      appIndex[ap] = apps.length;
      apps.push(ap);
    }
    const t = start[i];
    if (t < minStart) minStart = t;
    if (t > maxStart) maxStart = t;
  }
  return { appIndex, apps, minStart, maxStart };
}

/** Whether sums of any n values of a minutes column, in any order, are exact (integer thousandths). */
export function sumsExact(c: { scale: number; maxAbs: number }, n: number): boolean {
  return c.scale === 1000 && n * c.maxAbs <= Number.MAX_SAFE_INTEGER;
}

/** How a kernel walks the store's blocks: where a block's sums stand in for its slots, and how each is added. */
export interface BlockWalk<B> {
  /** log2 of the slots per block walked (the store's blocks, or its superblocks). */
  bits: number;
  /** Skip (block granularity only) a block none of whose starts lies in the plan's window. */
  window: boolean;
  /** The block's sums if they may stand in for its slots under this plan, else undefined (scan it). */
  sums?: (b: number) => B | undefined;
  add: (sums: B) => void;
  /** Adds the matching calls among slots [lo, hi), slot by slot. */
  scan: (lo: number, hi: number) => void;
}

/** Walks every full block (adding its sums, or scanning it), then the tail of slots past the last one. */
export function walkBlocks<B>(plan: Plan, walk: BlockWalk<B>): void {
  const { s, from, to } = plan;
  const { bits } = walk;
  const full = s.n >> bits;
  for (let b = 0; b < full; b++) {
    if (walk.window && !(s.blockMaxStart[b]! >= from && s.blockMinStart[b]! < to)) continue; // no start of the block in the window
    const sums = walk.sums?.(b);
    if (sums !== undefined) {
      walk.add(sums);
      continue;
    }
    const lo = b << bits;
    walk.scan(lo, lo + (1 << bits));
  }
  walk.scan(full << bits, s.n);
}

/** Whether a block's sums cover only starts inside the plan's window (then they stand in for its slots whole). */
export function inWindow(plan: Plan, sums: { minStart: number; maxStart: number }): boolean {
  return sums.minStart >= plan.from && sums.maxStart < plan.to;
}
