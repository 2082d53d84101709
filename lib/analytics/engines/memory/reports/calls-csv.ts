import { openDatabase, type Db } from "@/db/client";
import type { RowBatches } from "@/lib/export/csv";
import { ownBatch } from "@/lib/export/csv-bytes";
import type { Filters } from "../../../filters";
import { callsOrder, callsOrderHead } from "./calls";
import { CallsCsvReader, STORE_ROW } from "./calls-csv-reader";
import { visibleApps, resolveApps, type Scope } from "../../../scope";
import type { CsvOrder, OrderHead, RowOrder, StoreRows, StoreValuesOf } from "../report-answerer";
import { currentStore } from "../store/load";
import { slotOfPk } from "../store/store";

/**
 * The rows of the calls CSV (CALL_RAW_COLUMNS order), in batches, from two sources: the
 * in-memory store for the eleven columns it holds exactly (app, type, mode, status,
 * receiver type, has recording, start, duration, participants, audio and video minutes)
 * and SQLite, by pk, for the seven it does not (session id, initiator, receiver, the three
 * timestamps, total duration minutes). Turning a column into a JS value is most of
 * SQLite's cost per row, so reading 7 columns rather than 18 about halves it.
 *
 * Exactness: a store value is used only when it is provably the row's current value —
 * the call has no entry in `analytics_changes` at or after the store's seq (the newest
 * entry the store applied is included: a participant write right after it appends
 * nothing), read in the same transaction as the row's text — and its dims are all known
 * values (a code "other" stands for any unknown text or NULL). Any other row (changed
 * since, unknown dims, not in the store, a pruned log) is read whole from SQLite, as
 * before. The values are the very numbers and strings SQLite returns (minutes held as
 * thousandths read back as m / 1000, SQLite's double), so the CSV's bytes are the same.
 */

export { STORE_ROW };

/** Store values of `pks` (no catch-up: the reader checks the change log itself). Runs where the store lives. */
export function storeRows(db: Db, pks: ArrayLike<number>): StoreRows {
  const s = currentStore(db);
  const v = new Float64Array(pks.length * STORE_ROW);
  const pkCol = s.pk.a, app = s.app.a, cell = s.cell.a, start = s.start.a, dur = s.dur.a, pc = s.pc.a;
  const audio = s.audio.a, video = s.video.a, aScale = s.audio.scale, vScale = s.video.scale;
  let slot = -1;
  for (let i = 0; i < pks.length; i++) {
    const pk = pks[i];
    // Neighbours in the CSV are often neighbours in pk order (calls arrive in start order).
    if (slot + 1 < s.n && pkCol[slot + 1] === pk) slot++;
    else if (slot > 0 && pkCol[slot - 1] === pk) slot--;
    else slot = slotOfPk(s, pk);
    if (slot < 0) continue; // app 0: read whole from SQLite
    const o = i * STORE_ROW;
    v[o] = app[slot];
    v[o + 1] = cell[slot];
    v[o + 2] = start[slot];
    v[o + 3] = dur[slot];
    v[o + 4] = pc[slot];
    v[o + 5] = audio[slot] / aScale;
    v[o + 6] = video[slot] / vScale;
  }
  return { seq: s.seq, v };
}

/**
 * SQLite's largest memory map as better-sqlite3 builds it (SQLITE_MAX_MMAP_SIZE, 2 GB: a
 * larger ask is capped there). Reading the CSV's rows through a map rather than a copy
 * of each 4 KB page took ~0.5 µs off each row's read (docs/decisions/0021).
 */
export const CSV_MMAP_BYTES = 2 ** 31;

/**
 * The connection an export on the request's thread reads its rows with: its own
 * read-only one, memory-mapped (the process's shared connection keeps plain reads; its
 * writers are unaffected either way). Every batch is still one read transaction that
 * checks the change log, so which connection reads changes no byte. An in-memory
 * database has no file to share: its own connection then.
 */
function exportConnection(db: Db): { db: Db; close(): void } {
  const sqlite = db.$client;
  if (sqlite.memory) return { db, close: () => undefined };
  const own = openDatabase(sqlite.name, { readonly: true, migrate: false });
  own.$client.pragma(`mmap_size = ${CSV_MMAP_BYTES}`);
  return { db: own, close: () => own.$client.close() };
}

/**
 * The share of the batches the worker writes when it writes lines: more than half, as
 * this thread also sends every batch to the socket and reads through a map it opened
 * for this export (docs/benchmarks.md Session 7).
 */
const WORKER_SHARE = 0.6;

/** Rows per batch (the first is small: the first byte goes out early). */
const CSV_FIRST_BATCH = 256;
const CSV_BATCH = 2048;

/** Batches of positions [from, n): the first batch of the order is the small one. */
function* batchRanges(n: number, from = 0): Generator<[number, number]> {
  for (let i = from; i < n; ) {
    const end = Math.min(n, i + (i === 0 ? CSV_FIRST_BATCH : CSV_BATCH));
    yield [i, end];
    i = end;
  }
}

/**
 * The calls CSV's order where the store lives (the worker's `order` job): the first
 * batch's pks with their store values, then — `all`, called right after in the same job —
 * the whole order. The matches stay in the shared scratch (nothing runs in between), and
 * the head's values travel with it: the first rows need no second trip to the worker.
 */
export function callsCsvOrder(db: Db, f: Filters, scope: Scope): OrderHead {
  const { head, all } = callsOrderHead(db, f, scope, CSV_FIRST_BATCH, false);
  return { head, values: storeRows(db, head), all };
}

/**
 * Every call matching the filters (no paging), in the list's order, as batches of CSV
 * lines (CALL_RAW_COLUMNS, written field by field with csvRawStream's own `rawCell`:
 * the same bytes as its rows would give). Each batch is its own read: a call
 * re-synced during a long export shows its newest values at its place in the order, a
 * deleted one is left out.
 *
 * In-process (no `order`): the order and the store values from this thread's store.
 * With an `order` from the worker (head first: `callsCsvOrder` there): the head's rows
 * are written with the values that came with it as soon as it is there, the rest once
 * the whole order follows, with store values from `values` (the worker too), asked for
 * ahead; where `values` also writes lines (the worker), every other batch is written
 * there, side by side with this thread's; without `values`, rows are read whole (this
 * thread loads no store). A whole order (tests, scripts) is taken as its own head.
 */
export function callsCsvBatches(db: Db, f: Filters, scope: Scope, order?: CsvOrder, values?: StoreValuesOf): RowBatches {
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  if (order) resolveApps(db, f, scope); // 404 before the first byte, as in-process
  if (!order) {
    // The first batch from the order's head; the full sort (~1 s at 10M matches) only
    // once the client has it. Same snapshot, same order, same bytes.
    const { head, all } = callsOrderHead(db, f, scope, CSV_FIRST_BATCH);
    return (function* () {
      // Opened at the first pull (a stream never read opens nothing), closed when the export ends or is cancelled.
      const reading = exportConnection(db);
      try {
        const reader = new CallsCsvReader(reading.db, appIds, f.tz);
        if (head.length > 0) yield reader.bytes(head, storeRows(db, head));
        const pks = all(); // starts with the head
        for (const [a, b] of batchRanges(pks.length, head.length)) {
          const chunk = pks.subarray(a, b);
          yield reader.bytes(chunk, storeRows(db, chunk));
        }
      } finally {
        reading.close();
      }
    })();
  }
  const whole = ArrayBuffer.isView(order);
  // The head: the first batch's pks (or none: the order came all at once).
  const head = whole ? order.subarray(0, 0) : order.head;
  const headValues = whole ? undefined : order.headValues;
  const all = whole ? Promise.resolve(order) : order.all;
  // A copy, not a view: posting a view would clone its whole buffer (the full order).
  const ask = (pks: RowOrder, [a, b]: [number, number]) => (values ? values(pks.slice(a, b)).catch(() => undefined) : Promise.resolve(undefined));
  const lines = values?.lines;
  const apps = [...appIds];
  return (async function* () {
    const reading = exportConnection(db);
    try {
      yield* rest(new CallsCsvReader(reading.db, appIds, f.tz));
    } finally {
      reading.close();
    }
  })();

  async function* rest(reader: CallsCsvReader): AsyncGenerator<Uint8Array> {
    if (head.length > 0) yield reader.bytes(head, headValues ?? (await ask(head, [0, head.length])));
    const pks = await all; // starts with the head
    const ranges = [...batchRanges(pks.length, head.length)];
    // Where the worker writes lines too, it writes WORKER_SHARE of the batches, spread
    // evenly, while this thread writes the others and sends every batch to the socket:
    // two cores, each reading and writing part of the rows. Each batch is asked for eight
    // ahead and the worker holds up to four of them (host.ts BATCHES_POSTED), so that it
    // always has a job queued while this thread writes its own batch: with four ahead and
    // one posted at a time it idled 0.2–0.3 of the export (docs/decisions/0029). This
    // thread's values (quick jobs) wait behind at most a few batches of lines.
    type Pending = { lines: Promise<Uint8Array | undefined> } | { values: Promise<StoreRows | undefined> };
    const byWorker = (k: number) => Math.floor((k + 1) * WORKER_SHARE) > Math.floor(k * WORKER_SHARE);
    const begin = (k: number): Pending =>
      lines && byWorker(k) ? { lines: lines(pks.slice(ranges[k][0], ranges[k][1]), apps, f.tz).catch(() => undefined) } : { values: ask(pks, ranges[k]) };
    const AHEAD = 8;
    const pending: Array<Pending | undefined> = ranges.slice(0, AHEAD).map((_, k) => begin(k));
    for (let k = 0; k < ranges.length; k++) {
      if (k + AHEAD < ranges.length) pending[k + AHEAD] = begin(k + AHEAD);
      const p = pending[k]!;
      pending[k] = undefined;
      const chunk = pks.subarray(ranges[k][0], ranges[k][1]);
      if ("lines" in p) {
        const bytes = await p.lines;
        // The worker could not (stopped, aborted): this thread writes the batch.
        yield bytes ? ownBatch(bytes) : reader.bytes(chunk, await ask(pks, ranges[k]));
      } else yield reader.bytes(chunk, await p.values);
    }
  }
}

/**
 * One batch's CSV lines as UTF-8, written where the store lives (the worker's `lines`
 * job): the store's values and the rows read there, in one read, for apps (pk, app id)
 * the request may see, ISO times in `tz`. What `callsCsvBatches` writes for the batch on its own thread.
 */
export function callsCsvLines(db: Db, pks: RowOrder, apps: Array<[number, string]>, tz = "UTC", into?: ArrayBuffer): Uint8Array {
  return new CallsCsvReader(db, new Map(apps), tz).bytes(pks, storeRows(db, pks), into);
}

/** The same rows as arrays, one at a time, in-process or with a given order (tests, scripts). */
export function* iterateCallsRaw(db: Db, f: Filters, scope: Scope, order?: RowOrder): IterableIterator<unknown[]> {
  const reader = new CallsCsvReader(db, new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId])));
  const pks = order ?? callsOrder(db, f, scope);
  for (const [a, b] of batchRanges(pks.length)) {
    const chunk = pks.subarray(a, b);
    yield* reader.rows(chunk, storeRows(db, chunk));
  }
}
