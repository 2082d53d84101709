import { IntColumn, MinutesColumn } from "./columns";

/**
 * The in-memory analytics store: every call's filterable and summable fields, and its
 * participants grouped by uid, in typed arrays (one slot per call, pk order), loaded
 * from SQLite once per connection and kept current from `analytics_changes` before each
 * report (see changelog-sql.ts and docs/decisions/0006-analytics-rollups.md). Reports
 * (scan/) scan it: a few nanoseconds per call.
 *
 * Participants of a call live in a contiguous run of entries [pOff, pOff + pLen), one
 * entry per distinct uid of the call (a uid listed twice is merged: minutes summed,
 * joined/unanswered ORed), so "distinct calls" counts are entry counts. A changed call
 * gets a fresh run at the end; the old run becomes garbage until the next full load.
 */

/** Participant entry flags. */
export const JOINED = 1;

export const UNANSWERED = 2;

export interface AnalyticsStore {
  /** Slots in use. */
  n: number;
  pk: IntColumn;
  app: IntColumn;
  start: IntColumn;
  /** max(ended_at, start_at) − start_at (0 while ongoing). */
  span: IntColumn;
  cell: IntColumn;
  pc: IntColumn;
  dur: IntColumn;
  audio: MinutesColumn;
  video: MinutesColumn;
  pOff: IntColumn;
  pLen: IntColumn;
  /** Participant entries in use (garbage included). */
  m: number;
  garbage: number;
  uid: IntColumn;
  flags: IntColumn;
  pAudio: MinutesColumn;
  pVideo: MinutesColumn;
  pTotal: MinutesColumn;
  /** uid ids: per app pk, uid → id; and back. */
  uidIds: Map<number, Map<string, number>>;
  idApp: number[];
  idUid: string[];
  /** Largest app pk held (sizes the app lookup table of a filter). */
  maxApp: number;
  /** log2 of the slots per block (BLOCK_BITS; smaller in tests). */
  blockBits: number;
  /**
   * Per block of 2^blockBits slots (slot >> blockBits): a stamp bumped whenever a slot of the
   * block changes, and the participants' per-uid sums of the block's calls (scan/people.ts
   * peopleOf), valid while the stamp they were built at is the block's stamp.
   */
  blockStamp: number[];
  peopleBlocks: Array<PeopleBlock | undefined>;
  /**
   * Per superblock of 2^(blockBits + SUPER_SHIFT) slots: a stamp bumped whenever a slot of
   * it changes, and its participants' sums per (dims code, uid id) (scan/dims-people.ts),
   * which serve the participants and engagement reports under categorical filters.
   */
  superStamp: number[];
  dimsPeople: Array<DimsPeople | undefined>;
  /** The same sums over the full blocks of the unfilled last superblock (scan/dims-people.ts dimsPeopleHead), valid at those blocks' stamps (`key`). */
  dimsPeopleHead?: { lo: number; hi: number; key: string; sums: DimsPeople };
  /** Per full block: its participant entries grouped by dims code (scan/dims-entries.ts), valid at the block's stamp. */
  dimsEntries: Array<DimsEntries | undefined>;
  /** Per block: its calls' sums per app and quarter hour of start (scan/quarter.ts), valid at the block's stamp. */
  quarterBlocks: Array<QuarterBlock | undefined>;
  /** Per block: its calls' sums per (app, cell) (scan/cube.ts), valid at the block's stamp. */
  cubeBlocks: Array<CubeBlock | undefined>;
  /** Per block: its calls' heatmap counts per (app, quarter hour) (scan/heat.ts), valid at the block's stamp. */
  heatBlocks: Array<HeatBlock | undefined>;
  /**
   * Per block: bounds of the starts its slots have held (widened, never narrowed, as
   * slots change: a bound may be loose, never wrong). A scan filtered by time skips a
   * block that lies outside the window (the previous period of totals; a recent window
   * over months of calls written roughly in time order).
   */
  blockMinStart: number[];
  blockMaxStart: number[];
  /** Newest change-log seq applied. */
  seq: number;
  loadedAt: number;
  fullLoads: number;
}

/** Slots per block of the block sums: 65,536 calls (stores loaded after `setBlockBits` use its value: tests). */
const BLOCK_BITS = 16;

let blockBits = BLOCK_BITS;

/** Block size (log2 slots) of the stores loaded from now on; tests use tiny blocks. */
export function setBlockBits(bits = BLOCK_BITS): void {
  blockBits = bits;
}

/**
 * Sums of one block's participant entries per uid id (every call of the block, no
 * filter): `ids` and, per id, 8 values — calls listed, joined, unanswered,
 * audio, video and total minutes (thousandths: exact integers), first and last start;
 * `ids` null when the block's uids hardly repeat (the sums would not be smaller than
 * the entries). `minStart`/`maxStart` bound the block's starts.
 */
export interface PeopleBlock {
  stamp: number;
  ids: Int32Array | null;
  sums: Float64Array;
  minStart: number;
  maxStart: number;
}

/** Blocks per superblock, as a shift: 16 blocks (1,048,576 slots; 16 × the tests' tiny blocks). */
export const SUPER_SHIFT = 4;

/**
 * Sums of one superblock's participant entries per (dims code, uid id): the rows of dims
 * code d are rows [dOff[d], dOff[d + 1]) — `ids[q]` and ROW values from `sums[q * ROW]`
 * as in PeopleBlock. `dOff` null when the keys would not be much fewer than the entries
 * (the superblock is scanned instead: memory stays a small share of the entries').
 */
export interface DimsPeople {
  stamp: number;
  dOff: Int32Array | null;
  ids: Int32Array;
  sums: Float64Array;
  minStart: number;
  maxStart: number;
}

/**
 * One block's participant entries grouped by the dims code of their call: the entries of
 * dims code d are [dOff[d], dOff[d + 1]) — `uid` their uid ids, `slot` their call's slot
 * minus the block's first — in slot order within a code. `minStart`/`maxStart` bound the
 * block's starts.
 */
export interface DimsEntries {
  stamp: number;
  dOff: Int32Array;
  uid: Int32Array;
  slot: Uint16Array;
  minStart: number;
  maxStart: number;
}

/**
 * Sums of one block's calls per (app, quarter hour of start), no filter: for app index a
 * (`apps[a]` its pk) and quarter q0 + q, the 5 values calls, audio and video minutes
 * (the columns' units: thousandths), duration seconds and participants from
 * `sums[(a * nq + q) * 5]`; `sums` null when the block spans too many quarters.
 * Serves the daily report in any zone whose offsets and changes fall on quarter hours.
 */
export interface QuarterBlock {
  stamp: number;
  q0: number;
  nq: number;
  apps: Int32Array;
  sums: Float64Array | null;
  minStart: number;
  maxStart: number;
}

/**
 * Sums of one block's calls per (app, cell), no filter: key q is app pk × CELLS + cell
 * (`keys[q]`), its 5 values (calls, audio and video minutes in the columns' units,
 * duration seconds, participants) from `sums[q * 5]`; `sums` null when the keys would
 * not be much fewer than the calls. Serve totals, breakdowns and durations under any
 * categorical filter (a filter keeps or drops whole cells).
 */
export interface CubeBlock {
  stamp: number;
  keys: Int32Array;
  sums: Float64Array | null;
  minStart: number;
  maxStart: number;
}

/**
 * One block's calls as the heatmap counts them, per app and quarter hour, no filter: for
 * app index a, `starts[a * nq + q]` calls start in quarter q0 + q, and
 * `runs[a * nr + r]` calls run past the start of quarter r0 + r (start quarter < it ≤
 * their last, at most `maxCrossings` after the start); null when the block spans too
 * many quarters.
 */
export interface HeatBlock {
  stamp: number;
  maxCrossings: number;
  apps: Int32Array;
  q0: number;
  nq: number;
  r0: number;
  nr: number;
  starts: Float64Array | null;
  runs: Float64Array | null;
}

/** Marks the block of `slot` changed (its block sums are rebuilt on next use). */
export function touchBlock(s: AnalyticsStore, slot: number): void {
  const b = slot >> s.blockBits;
  s.blockStamp[b] = (s.blockStamp[b] ?? 0) + 1;
  const g = b >> SUPER_SHIFT;
  s.superStamp[g] = (s.superStamp[g] ?? 0) + 1;
}

export function emptyStore(callCap: number, entryCap: number): AnalyticsStore {
  return {
    n: 0, pk: new IntColumn("i32", callCap), app: new IntColumn("u16", callCap), start: new IntColumn("i32", callCap),
    span: new IntColumn("i32", callCap), cell: new IntColumn("u16", callCap), pc: new IntColumn("u16", callCap),
    dur: new IntColumn("i32", callCap), audio: new MinutesColumn(callCap), video: new MinutesColumn(callCap),
    pOff: new IntColumn("i32", callCap), pLen: new IntColumn("u16", callCap),
    m: 0, garbage: 0, uid: new IntColumn("i32", entryCap), flags: new IntColumn("u8", entryCap),
    pAudio: new MinutesColumn(entryCap), pVideo: new MinutesColumn(entryCap), pTotal: new MinutesColumn(entryCap),
    uidIds: new Map(), idApp: [], idUid: [], maxApp: 0, blockBits, blockStamp: [], peopleBlocks: [], superStamp: [], dimsPeople: [], dimsEntries: [], quarterBlocks: [], cubeBlocks: [], heatBlocks: [], blockMinStart: [], blockMaxStart: [], seq: 0, loadedAt: 0, fullLoads: 0,
  };
}

export function findSlot(s: AnalyticsStore, pk: number): number {
  const a = s.pk.a;
  let lo = 0;
  let hi = s.n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = a[mid];
    if (v === pk) return mid;
    if (v < pk) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The slot holding `pk`, or -1. */
export function slotOfPk(s: AnalyticsStore, pk: number): number {
  return findSlot(s, pk);
}

/** Bytes held by the store's arrays (the bench reports it). */
export function storeBytes(s: AnalyticsStore): number {
  const cols = [s.pk, s.app, s.start, s.span, s.cell, s.pc, s.dur, s.audio, s.video, s.pOff, s.pLen, s.uid, s.flags, s.pAudio, s.pVideo, s.pTotal];
  return cols.reduce((sum, c) => sum + c.bytes, 0);
}
