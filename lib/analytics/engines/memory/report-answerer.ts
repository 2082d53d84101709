import type { Db } from "@/db/client";
import type { Filters } from "../../filters";
import type { CsvSource, ReportJson, ReportName, ReportRow } from "../../report-csv-writers";
import type { Scope } from "../../scope";

/** The store's values of a batch of the calls CSV's pks (reports/calls-csv.ts storeRows): what the worker sends the request's thread. */
export interface StoreRows {
  /** The store's newest applied change-log entry when the values were read. */
  seq: number;
  /** STORE_ROW (calls-csv.ts) values per pk, in the pks' order. */
  v: Float64Array;
}

/** Pks of a raw CSV's rows, in the CSV's order (4 or 8 bytes a row: cheap to send between threads). */
export type RowOrder = Int32Array | Float64Array;

/**
 * The store's values of a batch of pks, from the store's thread (the calls CSV: calls-csv.ts); undefined: none to give.
 * `lines`, where that thread can also write a batch's CSV lines (UTF-8, each ending in CRLF) for the apps given (pk,
 * app id), ISO times in zone `tz`; undefined from it: write them here.
 */
export type StoreValuesOf = ((pks: RowOrder) => Promise<StoreRows | undefined>) & {
  lines?: (pks: RowOrder, apps: Array<[number, string]>, tz: string) => Promise<Uint8Array | undefined>;
};

/**
 * A raw CSV's order where the store lives, head first: the pks of its first batch and
 * their store values at once, the whole order (starting with that head) when `all` is
 * called — one snapshot, so nothing may use the store's thread in between.
 */
export interface OrderHead {
  head: RowOrder;
  values: StoreRows;
  all: () => RowOrder;
}

/**
 * The same order as the request's thread gets it from the worker: the head as soon as
 * the worker has it, the whole order (starting with the head) when it follows. An
 * empty head with a non-empty order: it came all at once.
 */
export interface HeadFirstOrder {
  head: RowOrder;
  /** The head's store values; absent: the head's rows are read like any other batch. */
  headValues?: StoreRows;
  all: Promise<RowOrder>;
}

/** An order handed to a raw CSV's rows: whole (tests, scripts) or head first (the worker). */
export type CsvOrder = RowOrder | HeadFirstOrder;

/**
 * How the memory engine computes one report (the table: report-answerers.ts): its JSON answer
 * and its CSV rows, as synchronous functions of a connection. Kept free of server-only
 * imports (auth, the process's connection) so that the analytics worker thread
 * (worker/thread.ts) loads the same table.
 */
export interface ReportAnswerer<N extends ReportName> {
  name: N;
  json: (db: Db, f: Filters, scope: Scope) => ReportJson<N>;
  /** Rows of the CSV (all of them, no paging), as objects. */
  csv: {
    rows: (db: Db, f: Filters, scope: Scope) => Iterable<ReportRow<N>>;
    /**
     * The same rows as arrays in column order, in batches (large exports: no object per
     * row), streamed on the request's thread. `order`, if given, is computed where the
     * store lives (the worker: `offThread.order`), head first, and handed to `rows` (which
     * computes it in-process when it gets none) as soon as the head is there, with
     * `values`: the store's values of a batch of pks, also from the worker
     * (`AnalyticsWorker.values`).
     */
    raw?: {
      order?: (db: Db, f: Filters, scope: Scope) => OrderHead;
      rows: (db: Db, f: Filters, scope: Scope, order?: CsvOrder, values?: StoreValuesOf) => CsvSource<N>;
    };
  };
  /**
   * What the analytics worker may compute (worker/host.ts): `json`, and `csv` = the
   * whole `csv.rows` array (only for reports that scan the store and return a bounded
   * list; streamed SQLite exports stay on the request's thread), `order` =
   * `csv.raw.order` (its head, then the whole order: typed arrays, transferred back).
   */
  offThread?: { json?: boolean; csv?: boolean; order?: boolean };
}

/** A JSON `{data}` answer for reports that return a plain list. */
export const listOf =
  <Row>(fn: (db: Db, f: Filters, scope: Scope) => Row[]) =>
  (db: Db, f: Filters, scope: Scope) => ({ data: fn(db, f, scope) });
