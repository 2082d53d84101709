import type { Pagination } from "@/lib/platform/calls-client";

/**
 * A bound on one pass over an app's pages (issue 12 item 1). The platform says on every
 * page how many calls the list holds. A list that keeps growing during the run, a pass
 * that fetches far more than was announced, or the same calls served again page after
 * page is an upstream that does not converge: without a bound one such app kept a sync
 * running until it was killed (7,259 pages, 4.28M calls, a 6.4 GB warehouse).
 *
 * The slack is generous, so a real app that gains calls while it is paged is never
 * stopped: ten pages or a tenth of the announcement, whichever is more. A real backfill
 * of an app that grows faster than that runs with `allowGrowth` (`--allow-growth`), which
 * lifts the announcement bound; the repeat check stays, as repeats are never real.
 */

/** Pages of slack before the announcement bound bites (10,000 calls at perPage 1000). */
export const GROWTH_SLACK_PAGES = 10;
/** Share of the announced total allowed as growth, when that is more than the pages above. */
export const GROWTH_SLACK_SHARE = 0.1;
/** Consecutive pages of nothing but calls already served in this pass. */
export const MAX_REPEATED_PAGES = 3;

/** The sync stopped an app's run on purpose: the upstream does not converge. */
export class UpstreamNotConvergingError extends Error {
  constructor(readonly appId: string, message: string) {
    super(message);
    this.name = "UpstreamNotConvergingError";
  }
}

export interface ConvergenceOptions {
  appId: string;
  perPage: number;
  /** Where the pass begins: pages before it are not expected again. */
  startPage: number;
  /** Lift the announcement bound (a real backfill of an app growing fast). */
  allowGrowth: boolean;
}

const n = (v: number) => v.toLocaleString("en");

/** The calls a page's pagination announces for the whole list, when it says. */
export function announcedCalls(p: Pagination, perPage: number): number | undefined {
  if (p.total !== undefined && p.total >= 0) return p.total;
  if (p.totalPages !== undefined && p.totalPages >= 0) return p.totalPages * (p.perPage ?? perPage);
  return undefined;
}

export class ConvergenceGuard {
  private first: number | undefined;
  private latest: number | undefined;
  private fetched = 0;
  private repeatedPages = 0;

  constructor(private readonly o: ConvergenceOptions) {}

  /** The total announced on the pass's first page. */
  get announcedTotal(): number | null {
    return this.first ?? null;
  }

  /**
   * Called after each page is handled, with how many of its records this pass had served
   * already (the run's dedupe window). Throws UpstreamNotConvergingError to stop the run.
   */
  checkPage(pagination: Pagination, records: number, repeated: number): void {
    const announced = announcedCalls(pagination, this.o.perPage);
    if (this.first === undefined) this.first = announced;
    if (announced !== undefined) this.latest = announced;
    this.fetched += records;

    this.repeatedPages = records > 0 && repeated === records ? this.repeatedPages + 1 : 0;
    if (this.repeatedPages >= MAX_REPEATED_PAGES) {
      this.stop(`it served the same calls again on ${this.repeatedPages} pages in a row`);
    }
    if (this.o.allowGrowth || this.first === undefined) return;
    const slack = Math.max(GROWTH_SLACK_PAGES * this.o.perPage, Math.ceil(GROWTH_SLACK_SHARE * this.first));
    if (this.latest !== undefined && this.latest > this.first + slack) {
      this.stop(`the total it announces grew from ${n(this.first)} to ${n(this.latest)} calls during this run`, true);
    }
    const expected = Math.max(0, this.first - (this.o.startPage - 1) * this.o.perPage);
    if (this.fetched > expected + slack) {
      this.stop(`it has served ${n(this.fetched)} calls in this run where it announced ${n(expected)}`, true);
    }
  }

  private stop(why: string, growth = false): never {
    const advice = growth
      ? " If the app really gained that many calls during the run, run it again with --allow-growth."
      : "";
    throw new UpstreamNotConvergingError(
      this.o.appId,
      `sync of app ${this.o.appId} stopped: the Calls API does not converge (${why}). The calls already fetched are kept.${advice}`,
    );
  }
}
