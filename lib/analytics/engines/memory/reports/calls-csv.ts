import type Database from "better-sqlite3";
import { openDatabase, type Db } from "@/db/client";
import { CALL_RAW_COLUMNS } from "../../../csv-columns";
import { csvContext, dataColumns, labelCell, rawCell, rawDerived, rawKind, type RowBatches } from "@/lib/export/csv";
import { CsvBytes, utf8Bytes } from "@/lib/export/csv-bytes";
import { isoBytes, type IsoBytes } from "@/lib/export/iso";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "../../../dims";
import { DIMS, dimCode, dimsOfCell, recordingOf } from "../scan/cell-codec";
import type { Filters } from "../../../filters";
import { callsOrder, callsOrderHead, rawRowsByPk } from "./calls";
import { visibleApps, resolveApps, type Scope } from "../../../scope";
import type { CsvOrder, OrderHead, RowOrder, StoreRows, StoreValuesOf } from "../report-route";
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

/** Store values of one row, interleaved: app pk (0: not in the store), cell, start, duration s, participants, audio, video. */
export const STORE_ROW = 7;


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

/** Field kinds of the CSV's data columns (csvRawStream's formatting of each); its derived columns follow them. */
const K = dataColumns(CALL_RAW_COLUMNS).map(rawKind);

/** A whole row (CALL_RAW_COLUMNS order) as one CSV line, without its CRLF. */
function wholeLine(r: unknown[]): string {
  let line = rawCell(r[0], K[0]);
  for (let c = 1; c < K.length; c++) line += "," + rawCell(r[c], K[c]);
  return line;
}

/**
 * The fields a dims code (cell % 360) stands for: type, mode, status, receiver type,
 * has recording (0/1) — as values, and as the CSV's bytes (their cells, and the four
 * label cells) — or undefined where one is "other" (NULL or unknown text: only SQLite
 * knows which).
 */
const DIMS_FIELDS = Array.from({ length: DIMS }, (_, d) => {
  const t = TYPES[dimCode(d, "type")], m = MODES[dimCode(d, "mode")], st = STATUSES[dimCode(d, "status")], rt = RECEIVER_TYPES[dimCode(d, "receiverType")];
  if (t === undefined || m === undefined || st === undefined || rt === undefined) return undefined;
  const rec = recordingOf(d);
  return {
    values: [t, m, st, rt, rec] as const,
    typeModeStatus: utf8Bytes(`${rawCell(t, K[2])},${rawCell(m, K[3])},${rawCell(st, K[4])}`),
    receiverType: utf8Bytes(rawCell(rt, K[7])),
    hasRecording: utf8Bytes(rawCell(rec, K[12])),
    labels: utf8Bytes([t, m, st, rt].map(labelCell).join(",")),
  };
});

/**
 * The columns the store lacks, one row per pk in the array's order: LEFT JOIN keeps
 * json_each the outer loop (SQLite never moves the left operand of a LEFT JOIN inward)
 * and json_each walks the array in order; a deleted call gives a row of NULLs
 * (session_id is NOT NULL otherwise).
 */
const TEXT_SQL = `SELECT c.session_id, c.initiator, c.receiver, c.initiated_at, c.started_at, c.ended_at, c.total_duration_minutes
  FROM json_each(?) AS j LEFT JOIN calls c ON c.pk = j.value`;

const textStatements = new WeakMap<Database.Database, Database.Statement>();

/** The text columns of `pks`, one row per pk in its order (NULLs for a deleted call). */
function textRows(sqlite: Database.Database, pks: RowOrder): unknown[][] {
  let stmt = textStatements.get(sqlite);
  if (!stmt) textStatements.set(sqlite, (stmt = sqlite.prepare(TEXT_SQL).raw(true)));
  return stmt.all(`[${Array.prototype.join.call(pks, ",")}]`) as unknown[][];
}

/**
 * Calls changed since a store seq, read incrementally from `analytics_changes` (each
 * batch reads only the entries after the last it saw). "all" once the log was pruned
 * past what is needed: every row is then read whole.
 */
class ChangedSince {
  private readonly pks = new Set<number>();
  /** The first entry not read yet (the store's own newest entry is read: see above). */
  private next: number;
  private lost = false;

  constructor(readonly from: number) {
    this.next = from;
  }

  read(sqlite: Database.Database): Set<number> | "all" {
    if (this.lost) return "all";
    // Entries are rowids, contiguous (max + 1) and pruned oldest first: none of those
    // needed is gone iff the oldest kept is not after the first needed.
    const oldest = sqlite.prepare("SELECT min(seq) FROM analytics_changes").pluck().get() as number | null;
    if (oldest !== null && oldest > Math.max(this.next, 1)) {
      this.lost = true;
      return "all";
    }
    const rows = sqlite.prepare("SELECT seq, call_pk FROM analytics_changes WHERE seq >= ? ORDER BY seq").raw(true).all(this.next) as Array<[number, number]>;
    for (const [seq, pk] of rows) {
      this.pks.add(pk);
      this.next = seq + 1;
    }
    return this.pks;
  }
}

/** Bytes a row of the last batch took (the next batch's buffer is sized from it). */
let bytesPerRow = 320;

/** Builds the CSV's rows of successive pk batches (one read transaction each). */
class CallsCsvReader {
  private changed: ChangedSince | undefined;
  private readonly appCells = new Map<number, Uint8Array>();
  /** The derived cells (labels, ISO times in the download's zone) of a whole row, as text. */
  private readonly derived: (r: ArrayLike<unknown>) => string;
  private readonly iso: IsoBytes;

  constructor(
    private readonly db: Db,
    private readonly appIds: Map<number, string>,
    tz = "UTC",
  ) {
    this.derived = rawDerived(CALL_RAW_COLUMNS, csvContext(tz));
    this.iso = isoBytes(tz);
  }

  /**
   * The rows of `pks` that still exist, in that order, read in one transaction; `values`:
   * the store's, if any. Each row is `write`'s: from the store's values and the text
   * columns (`t`, then `o`: the row's offset in `values.v`), or read whole (`whole`).
   */
  private read(pks: RowOrder, values: StoreRows | undefined, write: (t: unknown[], o: number) => void, whole: (r: unknown[]) => void): void {
    if (pks.length === 0) return;
    const sqlite = this.db.$client;
    sqlite.transaction(() => {
      if (values) {
        // A store older than the first one seen (never, short of a replaced warehouse): track from there.
        if (!this.changed || values.seq < this.changed.from) this.changed = new ChangedSince(values.seq);
      }
      const changed = values && this.changed!.read(sqlite);
      if (!values || changed === "all" || !changed) {
        for (const r of this.whole(pks)) whole(r);
        return;
      }
      const text = textRows(sqlite, pks);
      const v = values.v;
      // Calls the store cannot vouch for (changed since its snapshot, unknown dims, not in it): read whole.
      const wholePks: number[] = [];
      const isWhole = new Uint8Array(pks.length);
      for (let i = 0; i < pks.length; i++) {
        const o = i * STORE_ROW;
        if (text[i][0] !== null && (v[o] === 0 || DIMS_FIELDS[dimsOfCell(v[o + 1])] === undefined || changed.has(pks[i]))) {
          wholePks.push(pks[i]);
          isWhole[i] = 1;
        }
      }
      const byPk = wholePks.length > 0 ? new Map(this.whole(wholePks).map((r) => [r[PK_INDEX] as number, r])) : undefined;
      for (let i = 0; i < pks.length; i++) {
        if (text[i][0] === null) continue; // deleted since the order was taken
        if (isWhole[i] === 0) write(text[i], i * STORE_ROW);
        else {
          // Missing only if deleted between the two reads of this transaction: impossible; dropped all the same.
          const r = byPk!.get(pks[i]);
          if (r) whole(r);
        }
      }
    })();
  }

  /** The rows of `pks` as CSV lines in UTF-8 (each ending in CRLF): `rawCell` of each field, the derived cells after. */
  bytes(pks: RowOrder, values: StoreRows | undefined): Uint8Array {
    const w = new CsvBytes(pks.length * (bytesPerRow + 16));
    const v = values?.v;
    const iso = this.iso;
    this.read(
      pks,
      values,
      (t, o) => {
        const appPk = v![o];
        const dims = DIMS_FIELDS[dimsOfCell(v![o + 1])]!;
        w.reserve(charsOf(t[0]) + charsOf(t[1]) + charsOf(t[2]));
        w.piece(this.appCell(appPk));
        w.comma();
        w.cell(t[0], K[1]);
        w.comma();
        w.piece(dims.typeModeStatus);
        w.comma();
        w.cell(t[1], K[5]);
        w.comma();
        w.cell(t[2], K[6]);
        w.comma();
        w.piece(dims.receiverType);
        w.comma();
        w.cell(t[3], K[8]);
        w.comma();
        w.cell(t[4], K[9]);
        w.comma();
        w.cell(t[5], K[10]);
        w.comma();
        w.cell(v![o + 2], K[11]);
        w.comma();
        w.piece(dims.hasRecording);
        w.comma();
        w.cell(v![o + 5], K[13]);
        w.comma();
        w.cell(v![o + 6], K[14]);
        w.comma();
        w.cell(t[6], K[15]);
        w.comma();
        w.cell(v![o + 3], K[16]);
        w.comma();
        w.cell(v![o + 4], K[17]);
        // The derived cells: the four labels, then the ISO times of initiatedAt, startedAt, endedAt, startAt.
        w.comma();
        w.piece(dims.labels);
        w.comma();
        w.iso(t[3], iso);
        w.comma();
        w.iso(t[4], iso);
        w.comma();
        w.iso(t[5], iso);
        w.comma();
        w.iso(v![o + 2], iso);
        w.crlf();
      },
      (r) => {
        w.utf8(wholeLine(r) + this.derived(r));
        w.crlf();
      },
    );
    if (pks.length > 0) bytesPerRow = Math.ceil(w.pos / pks.length);
    return w.bytes();
  }

  /** The rows of `pks` as arrays (CALL_RAW_COLUMNS order): the same values `bytes` writes. */
  rows(pks: RowOrder, values: StoreRows | undefined): unknown[][] {
    const out: unknown[][] = [];
    const v = values?.v;
    this.read(
      pks,
      values,
      (t, o) => {
        const dims = DIMS_FIELDS[dimsOfCell(v![o + 1])]!.values;
        out.push([
          this.appIds.get(v![o]) ?? String(v![o]), t[0], dims[0], dims[1], dims[2], t[1], t[2], dims[3], t[3], t[4], t[5],
          v![o + 2], dims[4], v![o + 5], v![o + 6], t[6], v![o + 3], v![o + 4],
        ]);
      },
      (r) => out.push(r),
    );
    return out;
  }

  private appCell(appPk: number): Uint8Array {
    let cell = this.appCells.get(appPk);
    if (cell === undefined) this.appCells.set(appPk, (cell = utf8Bytes(rawCell(this.appIds.get(appPk) ?? String(appPk), K[0]))));
    return cell;
  }

  /** Every column from SQLite (the path for rows the store cannot vouch for). */
  private whole(pks: ArrayLike<number>): unknown[][] {
    const rows = rawRowsByPk(this.db, pks);
    for (const r of rows) r[0] = this.appIds.get(r[0] as number) ?? String(r[0]);
    return rows;
  }
}

/** UTF-16 units of a text column's value (what a row may need room for). */
const charsOf = (v: unknown): number => (typeof v === "string" ? v.length : 32);

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

/** Index of the pk in a whole row: after the 18 CSV columns. */
const PK_INDEX = 18;

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
    // Where the worker writes lines too, it writes every other batch while this thread
    // writes the one before: two cores, each reading and writing half the rows. Each
    // batch is asked for four ahead, so that the worker always has a job queued (with
    // two, it idled a tenth of the time) and this thread's values (quick jobs) are never
    // behind more than one batch of lines.
    type Pending = { lines: Promise<Uint8Array | undefined> } | { values: Promise<StoreRows | undefined> };
    const begin = (k: number): Pending =>
      lines && k % 2 === 1 ? { lines: lines(pks.slice(ranges[k][0], ranges[k][1]), apps, f.tz).catch(() => undefined) } : { values: ask(pks, ranges[k]) };
    const AHEAD = 4;
    const pending: Array<Pending | undefined> = ranges.slice(0, AHEAD).map((_, k) => begin(k));
    for (let k = 0; k < ranges.length; k++) {
      if (k + AHEAD < ranges.length) pending[k + AHEAD] = begin(k + AHEAD);
      const p = pending[k]!;
      pending[k] = undefined;
      const chunk = pks.subarray(ranges[k][0], ranges[k][1]);
      if ("lines" in p) {
        const bytes = await p.lines;
        // The worker could not (stopped, aborted): this thread writes the batch.
        yield bytes ?? reader.bytes(chunk, await ask(pks, ranges[k]));
      } else yield reader.bytes(chunk, await p.values);
    }
  }
}

/**
 * One batch's CSV lines as UTF-8, written where the store lives (the worker's `lines`
 * job): the store's values and the rows read there, in one read, for apps (pk, app id)
 * the request may see, ISO times in `tz`. What `callsCsvBatches` writes for the batch on its own thread.
 */
export function callsCsvLines(db: Db, pks: RowOrder, apps: Array<[number, string]>, tz = "UTC"): Uint8Array {
  return new CallsCsvReader(db, new Map(apps), tz).bytes(pks, storeRows(db, pks));
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
