import { W, type WriteRow } from "./pending-rows";

/**
 * Session ids that do not follow time (docs/decisions/0027).
 *
 * The platform serves calls newest first. Where an upstream's session ids follow time,
 * a page's ids come in index order and a backfill's inserts into the warehouse's
 * (app_pk, session_id) index all land at one edge of it: one leaf page a transaction.
 * Where they are random (UUIDs), each new id lands on a random leaf: a transaction of
 * 1,000 calls rewrote about 800 leaves of 16 KB, so a call cost 13 KB of WAL, a share of
 * a checkpoint and, with a page cache smaller than the index, a read. The write worker
 * tells the two apart by the page's own ids, and for scattered ones writes larger
 * transactions (each leaf once for more calls) with a page cache sized for the index
 * (leaves rewritten by the next transaction are still in memory).
 */

/** Below this many rows a page says nothing about its ids' order. */
const MIN_ROWS_TO_JUDGE = 16;
/** Share of adjacent ids that must go one way for a page to count as ordered. */
const ORDERED_SHARE = 0.9;

/** Whether the page's session ids, in the order they came, fall all over the index rather than in one direction. */
export function keysScattered(rows: readonly WriteRow[]): boolean {
  if (rows.length < MIN_ROWS_TO_JUDGE) return false;
  let up = 0;
  let down = 0;
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1][W.sessionId] as string;
    const b = rows[i][W.sessionId] as string;
    if (b > a) up++;
    else if (b < a) down++;
  }
  return Math.max(up, down) < ORDERED_SHARE * (up + down);
}

/** The page cache's floor (tuneForBackfill's 16 MB) and ceiling while ids are scattered, in KiB. */
export const BACKFILL_CACHE_KIB = 16 * 1024;
export const SCATTERED_CACHE_MAX_KIB = 96 * 1024;

/**
 * Bytes an index entry takes with the id `idLength` characters long: the id, the app's
 * pk and the row's pk as varints, a record header, a cell pointer; B-tree leaves filled
 * at random stay about 70% full.
 */
const entryBytes = (idLength: number) => (idLength + 12) / 0.7;

/**
 * The page cache (KiB) that holds the app's part of the session index after `calls` calls
 * with ids about `idLength` characters long, plus a quarter for the pages the
 * transactions append (calls, participants): between the backfill's 16 MB and 96 MB
 * (the syncing process's memory: docs/benchmarks.md, session 10).
 */
export function scatteredCacheKiB(calls: number, idLength: number): number {
  const kib = Math.ceil((calls * entryBytes(idLength) * 1.25) / 1024);
  return Math.min(SCATTERED_CACHE_MAX_KIB, Math.max(BACKFILL_CACHE_KIB, kib));
}

/** Mean length of the rows' session ids. */
export function meanIdLength(rows: readonly WriteRow[]): number {
  let sum = 0;
  for (const r of rows) sum += (r[W.sessionId] as string).length;
  return rows.length ? sum / rows.length : 0;
}
