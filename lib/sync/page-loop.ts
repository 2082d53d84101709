import { performance } from "node:perf_hooks";
import type { CallsClient } from "@/lib/platform/calls-client";
import { ConvergenceGuard } from "./convergence";
import type { PageCursor } from "./resume";
import type { RunState } from "./run-state";
import type { SyncSummary } from "./summary";

/**
 * One pass over an app's call list, page after page: fetch (a few pages ahead), hand each
 * page to the run's state (parse, classify, stage for the writer), keep the cursor and the
 * convergence bound up to date, and stop where the pass may stop.
 */

/** Pages read ahead by a pass that expects to stop at known calls. */
const INCREMENTAL_PREFETCH = 2;

export interface PassOptions {
  appId: string;
  /** The first page (1, or where a resumed backfill continues). */
  startPage: number;
  perPage: number;
  /** Pages requested ahead while the current one is handled. */
  prefetch: number;
  signal: AbortSignal;
  /**
   * Stop at the first page of calls all stored, unchanged and final, while every page so
   * far came newest first (an incremental run, the head of a resumed backfill).
   */
  stopAtKnown: boolean;
  /** Lift the convergence guard's announcement bound (`--allow-growth`). */
  allowGrowth: boolean;
  /** The run's resume cursor, for the run's first pass only. */
  cursor?: PageCursor;
  onPage?: (info: { page: number; fetched: number }) => void;
}

export interface PassResult {
  /** Every page to the end was walked (the pass did not stop at known calls). */
  complete: boolean;
  /** Every page came newest first by initiatedAt. */
  ordered: boolean;
}

export async function walkPages(client: CallsClient, state: RunState, summary: SyncSummary, o: PassOptions): Promise<PassResult> {
  const guard = new ConvergenceGuard({ appId: o.appId, perPage: o.perPage, startPage: o.startPage, allowGrowth: o.allowGrowth });
  const result: PassResult = { complete: true, ordered: true };
  let lastInitiated = Number.POSITIVE_INFINITY;
  let waitStart = performance.now();
  // A pass that expects to stop at known calls (an incremental run, the head of a resumed
  // backfill) usually ends within a page or two: reading SYNC_CONCURRENCY pages ahead
  // would spend the platform's request budget on pages thrown away.
  const prefetch = o.stopAtKnown ? Math.min(o.prefetch, INCREMENTAL_PREFETCH) : o.prefetch;
  const pages = client.pages({}, { perPage: o.perPage, startPage: o.startPage, prefetch, signal: o.signal });
  for await (const page of pages) {
    summary.timings.fetchWaitMs += performance.now() - waitStart;
    summary.timings.fetchMs += page.fetchMs;
    summary.pages++;
    summary.fetched += page.records.length;
    o.cursor?.served(page.pagination.perPage ?? page.records.length);
    o.cursor?.handing(page.page);
    const { allKnown, initiated, repeated } = await state.handle(page.records, page.raw, page.participantExtras);
    for (const t of initiated) {
      if (t === null) continue;
      if (t > lastInitiated) result.ordered = false;
      lastInitiated = t;
    }
    o.cursor?.handled(page.page, result.ordered);
    guard.checkPage(page.pagination, page.records.length, repeated);
    if (o.cursor && o.cursor.announcedTotal === null) o.cursor.announcedTotal = guard.announcedTotal;
    o.onPage?.({ page: page.page, fetched: summary.fetched });
    if (o.stopAtKnown && result.ordered && allKnown) {
      summary.stoppedEarly = true;
      result.complete = false;
      return result;
    }
    waitStart = performance.now();
  }
  return result;
}
