import { desc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";

/**
 * Resuming a backfill that failed part-way (issue 18; docs/decisions/0008).
 *
 * A run records the page through which everything its first pass fetched is committed
 * (`sync_runs.committed_page`). The next run of an app whose backfill never completed
 * continues from the page after it (the "tail"), then walks the list again from page 1
 * until it meets calls it already holds (the "head": calls that arrived in between).
 *
 * Why a page number is a safe cursor: the list is newest first, so calls that arrive
 * between the two runs are added at the top and push the rest down. The page after the
 * cursor then starts with calls already stored (read again, written as unchanged), never
 * past one that is not. The head pass stops at the first page of stored, final, unchanged
 * calls, as an incremental run does. Both rest on the order, so a run records a cursor
 * only while every page so far came newest first; otherwise the next run starts over.
 *
 * Page numbers count in the page size the platform served, which is not always the one
 * asked for (a server may ignore perPage): the run records the size served, and the
 * resumed run asks for that size. If the platform then serves another size, the cursor
 * means nothing: the resumed run walks the head whole and records no cursor itself.
 */

export interface ResumePoint {
  /** The failed run whose cursor this is. */
  fromRun: number;
  /** The first page to fetch. */
  page: number;
  /** The page size the cursor counts in (the one served): the resumed run asks for the same. */
  perPage: number;
}

/** Where the app's unfinished backfill continues, or null to start from page 1 (on either store of the state). */
export async function findResumePoint(db: Db, appPk: number): Promise<ResumePoint | null> {
  const { syncRuns } = tablesOf(db);
  const [last] = await db
    .select({ pk: syncRuns.pk, status: syncRuns.status, perPage: syncRuns.perPage, committedPage: syncRuns.committedPage })
    .from(syncRuns)
    .where(eq(syncRuns.appPk, appPk))
    .orderBy(desc(syncRuns.pk))
    .limit(1);
  if (!last || last.status !== "failed" || last.perPage === null || last.committedPage === null) return null;
  if (last.committedPage < 1) return null; // nothing committed: the same as starting over
  return { fromRun: last.pk, page: last.committedPage + 1, perPage: last.perPage };
}

/**
 * The run's cursor: which pages of its first pass are handed to the writer, committed,
 * and proven newest first, in which page size. RunState marks a commit with
 * `handedThrough()` when it asks for it and reports `committed(mark)` when it is stored.
 */
export class PageCursor {
  private handed: number;
  private committedThrough: number;
  private orderedThrough: number;
  /** The pages cannot serve as a cursor: out of order, or served in another size than resumed in. */
  private broken = false;
  private firstPageSeen = false;
  private firstPassOver = false;
  /** The total the platform announced on the first pass's first page. */
  announcedTotal: number | null = null;

  /** `pageSize`: the size asked for; replaced by the size served on a run from page 1. */
  constructor(readonly startPage: number, public pageSize: number) {
    this.handed = this.committedThrough = this.orderedThrough = startPage - 1;
  }

  /** Records a page served (its meta per_page, else its length), once: the first of the pass. */
  served(size: number): void {
    if (this.firstPageSeen || this.firstPassOver) return;
    this.firstPageSeen = true;
    if (size === this.pageSize || size <= 0) return;
    if (this.startPage > 1) this.broken = true; // the resumed pages are not the ones counted
    else this.pageSize = size;
  }

  /** Whether the first pass's pages can be trusted as a cursor (order and size). */
  get trusted(): boolean {
    return !this.broken;
  }

  /** The page's records are about to be staged. */
  handing(page: number): void {
    if (!this.firstPassOver) this.handed = page;
  }

  /** After the page: whether every page of the pass so far came newest first. */
  handled(page: number, ordered: boolean): void {
    if (this.firstPassOver) return;
    if (!ordered) this.broken = true;
    else if (!this.broken) this.orderedThrough = page;
  }

  /** Pages of later passes (the head, refreshes) are not part of the cursor. */
  endFirstPass(): void {
    this.firstPassOver = true;
  }

  handedThrough(): number {
    return this.handed;
  }

  committed(mark: number): void {
    this.committedThrough = Math.max(this.committedThrough, mark);
  }

  /** What the run row keeps: null when the pages are no cursor (not resumable by page). */
  get committedPage(): number | null {
    return this.broken ? null : Math.min(this.committedThrough, this.orderedThrough);
  }
}
