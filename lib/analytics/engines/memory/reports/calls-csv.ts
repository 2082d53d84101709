import type Database from "better-sqlite3";
import type { Db } from "@/db/client";
import { CALL_RAW_COLUMNS } from "../../../csv-columns";
import { csvContext, dataColumns, rawCell, rawDerived, rawKind, type CsvContext, type RowBatches } from "@/lib/export/csv";
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
 * has recording (0/1) — as values, and as the CSV's text — or undefined where one is
 * "other" (NULL or unknown text: only SQLite knows which).
 */
const DIMS_FIELDS = Array.from({ length: DIMS }, (_, d) => {
  const t = TYPES[dimCode(d, "type")], m = MODES[dimCode(d, "mode")], st = STATUSES[dimCode(d, "status")], rt = RECEIVER_TYPES[dimCode(d, "receiverType")];
  if (t === undefined || m === undefined || st === undefined || rt === undefined) return undefined;
  const rec = recordingOf(d);
  return {
    values: [t, m, st, rt, rec] as const,
    typeModeStatus: `${rawCell(t, K[2])},${rawCell(m, K[3])},${rawCell(st, K[4])}`,
    receiverType: rawCell(rt, K[7]),
    hasRecording: rawCell(rec, K[12]),
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

/** Builds the CSV's rows of successive pk batches (one read transaction each). */
class CallsCsvReader {
  private changed: ChangedSince | undefined;
  private readonly appTexts = new Map<number, string>();
  /** The derived cells (labels, ISO times in the download's zone) of a row's values. */
  private readonly derived: (r: ArrayLike<unknown>) => string;
  /** The values the derived cells read, of a row written from the store (reused: no array per row). */
  private readonly scratch: unknown[] = new Array(K.length).fill(null);

  constructor(
    private readonly db: Db,
    private readonly appIds: Map<number, string>,
    ctx: CsvContext = csvContext(),
  ) {
    this.derived = rawDerived(CALL_RAW_COLUMNS, ctx);
  }

  /**
   * The rows of `pks` that still exist, in that order; `values`: the store's, if any.
   * `asText`: as CSV lines (`rawCell` of each field: what csvRawStream would write for
   * the rows, without building an array per row), else as rows.
   */
  batch(pks: RowOrder, values: StoreRows | undefined, asText: true): string;
  batch(pks: RowOrder, values: StoreRows | undefined, asText: false): unknown[][];
  batch(pks: RowOrder, values: StoreRows | undefined, asText: boolean): unknown[][] | string {
    if (pks.length === 0) return asText ? "" : [];
    const sqlite = this.db.$client;
    const out: Array<unknown[] | string> = sqlite.transaction(() => {
      if (!values) return this.whole(pks);
      // A store older than the first one seen (never, short of a replaced warehouse): track from there.
      if (!this.changed || values.seq < this.changed.from) this.changed = new ChangedSince(values.seq);
      const changed = this.changed.read(sqlite);
      if (changed === "all") return this.whole(pks);
      const text = textRows(sqlite, pks);
      const v = values.v;
      const rows: Array<unknown[] | string> = [];
      // Calls read whole: their places in `rows`, filled after one more query.
      const wholePks: number[] = [];
      const marks: number[] = [];
      for (let i = 0; i < pks.length; i++) {
        const t = text[i];
        if (t[0] === null) continue; // deleted since the order was taken
        const o = i * STORE_ROW;
        const pk = pks[i];
        const appPk = v[o];
        const dims = DIMS_FIELDS[dimsOfCell(v[o + 1])];
        if (appPk === 0 || dims === undefined || changed.has(pk)) {
          wholePks.push(pk);
          marks.push(rows.length);
          rows.push(t);
          continue;
        }
        if (asText) {
          const x = this.scratch;
          [x[2], x[3], x[4], x[7], x[8], x[9], x[10], x[11]] = [dims.values[0], dims.values[1], dims.values[2], dims.values[3], t[3], t[4], t[5], v[o + 2]];
          rows.push(
            `${this.appText(appPk)},${rawCell(t[0], K[1])},${dims.typeModeStatus},${rawCell(t[1], K[5])},${rawCell(t[2], K[6])},${dims.receiverType},` +
              `${rawCell(t[3], K[8])},${rawCell(t[4], K[9])},${rawCell(t[5], K[10])},${rawCell(v[o + 2], K[11])},${dims.hasRecording},` +
              `${rawCell(v[o + 5], K[13])},${rawCell(v[o + 6], K[14])},${rawCell(t[6], K[15])},${rawCell(v[o + 3], K[16])},${rawCell(v[o + 4], K[17])}` +
              this.derived(x),
          );
        } else {
          rows.push([
            this.appIds.get(appPk) ?? String(appPk), t[0], dims.values[0], dims.values[1], dims.values[2], t[1], t[2], dims.values[3], t[3], t[4], t[5],
            v[o + 2], dims.values[4], v[o + 5], v[o + 6], t[6], v[o + 3], v[o + 4],
          ]);
        }
      }
      if (wholePks.length > 0) {
        const byPk = new Map(this.whole(wholePks).map((r) => [r[PK_INDEX] as number, r]));
        // A call missing here was deleted between the two reads of this transaction: impossible; dropped all the same.
        for (let w = 0; w < marks.length; w++) rows[marks[w]] = byPk.get(wholePks[w]) ?? "";
        return rows.filter((r) => r !== "");
      }
      return rows;
    })();
    if (!asText) return out as unknown[][];
    let lines = "";
    for (const r of out) lines += (typeof r === "string" ? r : wholeLine(r) + this.derived(r)) + "\r\n";
    return lines;
  }

  private appText(appPk: number): string {
    let text = this.appTexts.get(appPk);
    if (text === undefined) this.appTexts.set(appPk, (text = rawCell(this.appIds.get(appPk) ?? String(appPk), K[0])));
    return text;
  }

  /** Every column from SQLite (the path for rows the store cannot vouch for). */
  private whole(pks: ArrayLike<number>): unknown[][] {
    const rows = rawRowsByPk(this.db, pks);
    for (const r of rows) r[0] = this.appIds.get(r[0] as number) ?? String(r[0]);
    return rows;
  }
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
  const reader = new CallsCsvReader(db, appIds, csvContext(f.tz));
  if (!order) {
    // The first batch from the order's head; the full sort (~1 s at 10M matches) only
    // once the client has it. Same snapshot, same order, same bytes.
    const { head, all } = callsOrderHead(db, f, scope, CSV_FIRST_BATCH);
    return (function* () {
      if (head.length > 0) yield reader.batch(head, storeRows(db, head), true);
      const pks = all(); // starts with the head
      for (const [a, b] of batchRanges(pks.length, head.length)) {
        const chunk = pks.subarray(a, b);
        yield reader.batch(chunk, storeRows(db, chunk), true);
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
  // The worker writes its lines with UTC times (its jobs carry no zone): in another zone this thread writes every batch.
  const lines = f.tz === "UTC" ? values?.lines : undefined;
  const apps = [...appIds];
  return (async function* () {
    if (head.length > 0) yield reader.batch(head, headValues ?? (await ask(head, [0, head.length])), true);
    const pks = await all; // starts with the head
    const ranges = [...batchRanges(pks.length, head.length)];
    // Where the worker writes lines too, it writes every other batch while this thread
    // writes the one before: two cores, each reading and writing half the rows. Each
    // batch is asked for four ahead, so that the worker always has a job queued (with
    // two, it idled a tenth of the time) and this thread's values (quick jobs) are never
    // behind more than one batch of lines.
    type Pending = { lines: Promise<Uint8Array | undefined> } | { values: Promise<StoreRows | undefined> };
    const begin = (k: number): Pending =>
      lines && k % 2 === 1 ? { lines: lines(pks.slice(ranges[k][0], ranges[k][1]), apps).catch(() => undefined) } : { values: ask(pks, ranges[k]) };
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
        yield bytes ?? reader.batch(chunk, await ask(pks, ranges[k]), true);
      } else yield reader.batch(chunk, await p.values, true);
    }
  })();
}

/**
 * One batch's CSV lines as UTF-8, written where the store lives (the worker's `lines`
 * job): the store's values and the rows read there, in one read, for apps (pk, app id)
 * the request may see. What `callsCsvBatches` writes for the batch on its own thread.
 */
export function callsCsvLines(db: Db, pks: RowOrder, apps: Array<[number, string]>): Uint8Array {
  return new TextEncoder().encode(new CallsCsvReader(db, new Map(apps)).batch(pks, storeRows(db, pks), true));
}

/** The same rows as arrays, one at a time, in-process or with a given order (tests, scripts). */
export function* iterateCallsRaw(db: Db, f: Filters, scope: Scope, order?: RowOrder): IterableIterator<unknown[]> {
  const reader = new CallsCsvReader(db, new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId])));
  const pks = order ?? callsOrder(db, f, scope);
  for (const [a, b] of batchRanges(pks.length)) {
    const chunk = pks.subarray(a, b);
    yield* reader.batch(chunk, storeRows(db, chunk), false);
  }
}
