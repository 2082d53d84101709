import type { Filters } from "../../../filters";
import type { ReportJson, ReportName, ReportRow } from "../../../report-csv-writers";
import type { Scope } from "../../../scope";
import type { RowOrder, StoreRows } from "../report-answerer";

/**
 * The messages between the analytics worker's host (worker/host.ts) and its thread
 * (worker/thread.ts). Each job kind has its arguments and its answer here, in the
 * engine's own types (a report's JSON is `ReportJson<N>`, its CSV rows `ReportRow<N>[]`):
 * both sides are checked against this one table, so an answer is typed where it is
 * asked for without a cast.
 */

/** What the worker reports once its store is loaded. */
export interface WarmInfo {
  calls: number;
  /** Bytes of the sort scratch reserved at load (docs/decisions/0006 §11–12). */
  scratchBytes: number;
  /** Milliseconds spent building the block sums after the load. */
  sumsMs: number;
}

/** The first answer of an `order` job, ahead of the whole order: the head's pks and store values. */
export interface OrderPart {
  head: RowOrder;
  values: StoreRows;
}

interface ReportArgs<N extends ReportName> {
  name: N;
  filters: Filters;
  scope: Scope;
}

/** Each job kind's arguments (report jobs: for report N). */
export interface JobArgs<N extends ReportName = ReportName> {
  warm: object;
  /** A report's JSON. */
  json: ReportArgs<N>;
  /** A report's CSV rows, all of them (bounded reports only). */
  rows: ReportArgs<N>;
  /** The calls CSV's order: a part (OrderPart), then the whole order. */
  order: ReportArgs<N>;
  /** The calls CSV's store values of a batch of pks (calls-csv.ts). */
  values: { pks: RowOrder };
  /**
   * The calls CSV's lines of a batch of pks, as UTF-8 (calls-csv.ts), for the apps given (pk, app id), ISO times in
   * zone `tz`; `into`: a spent batch's buffer to write them in (moved to the worker, and back with the lines).
   */
  lines: { pks: RowOrder; apps: Array<[number, string]>; tz: string; into?: ArrayBuffer };
}

/** Each job kind's (last) answer. */
export interface JobAnswers<N extends ReportName = ReportName> {
  warm: WarmInfo;
  json: ReportJson<N>;
  rows: ReportRow<N>[];
  order: RowOrder;
  values: StoreRows;
  lines: Uint8Array;
}

export type JobKind = keyof JobArgs;

/** One job as posted to the worker. */
export type JobMessage<K extends JobKind, N extends ReportName = ReportName> = { id: number; kind: K } & JobArgs<N>[K];

/** Any job, as the worker receives it (a union it can switch on). */
export type WorkerJob = { [K in JobKind]: JobMessage<K> }[JobKind];

export interface WorkerError {
  name: string;
  message: string;
  status?: number;
  code?: string;
  details?: Record<string, unknown>;
}

/** The worker's answer to job `id`: a part (the order's head) while it goes on, then its answer or its error. */
export type WorkerReply = { id: number; ms: number } & (
  | { part: true; result: OrderPart }
  | { part?: false; result: JobAnswers[JobKind] }
  | { part?: false; error: WorkerError }
);
