import type Database from "better-sqlite3";
import type { Db } from "@/db/client";
import { CALL_RAW_COLUMNS } from "../../../csv-columns";
import { csvContext, dataColumns, labelCell, rawCell, rawDerived, rawKind } from "@/lib/export/csv";
import { CsvBytes, utf8Bytes } from "@/lib/export/csv-bytes";
import { isoBytes, type IsoBytes } from "@/lib/export/iso";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "../../../dims";
import { DIMS, dimCode, dimsOfCell, recordingOf } from "../scan/cell-codec";
import { rawRowsByPk } from "./calls";
import type { RowOrder, StoreRows } from "../report-answerer";

/**
 * The calls CSV's rows of one batch of pks, read in one transaction and written as
 * UTF-8 lines (calls-csv.ts streams the batches; docs/decisions/0006 §4 and 0021): the
 * store's values for the columns it holds exactly, SQLite's for the text columns, and
 * whole rows from SQLite for any call the store cannot vouch for.
 */

/** Store values of one row, interleaved: app pk (0: not in the store), cell, start, duration s, participants, audio, video. */
export const STORE_ROW = 7;

/** Index of the pk in a whole row: after the 18 CSV columns. */
const PK_INDEX = 18;

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
 * (session_id is NOT NULL otherwise). Read from the narrow index that holds just these
 * columns by pk (migration 0021): the planner would look each pk up in the table, whose
 * rows carry the raw record (1.3–6.5 KB: a page or more touched a row; docs/decisions/0028).
 */
const textSql = (index: string) => `SELECT c.session_id, c.initiator, c.receiver, c.initiated_at, c.started_at, c.ended_at, c.total_duration_minutes
  FROM json_each(?) AS j LEFT JOIN calls c ${index} ON c.pk = j.value`;

const textStatements = new WeakMap<Database.Database, Database.Statement>();

/** The statement of `textRows` on a connection: through the index, or the table where a file has no index (a read-only open of an unmigrated file). */
function textStatement(sqlite: Database.Database): Database.Statement {
  let stmt = textStatements.get(sqlite);
  if (!stmt) {
    const indexed = sqlite.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'calls_csv_text_idx'").get() !== undefined;
    stmt = sqlite.prepare(textSql(indexed ? "INDEXED BY calls_csv_text_idx" : "")).raw(true);
    textStatements.set(sqlite, stmt);
  }
  return stmt;
}

/** The text columns of `pks`, one row per pk in its order (NULLs for a deleted call). */
function textRows(sqlite: Database.Database, pks: RowOrder): unknown[][] {
  return textStatement(sqlite).all(`[${Array.prototype.join.call(pks, ",")}]`) as unknown[][];
}

/** How `textRows` reads on this connection (tests: that it goes through the index). */
export function textRowsPlan(sqlite: Database.Database): string[] {
  const sql = textStatement(sqlite).source;
  return (sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("[1]") as Array<{ detail: string }>).map((r) => r.detail);
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
export class CallsCsvReader {
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

  /**
   * The rows of `pks` as CSV lines in UTF-8 (each ending in CRLF): `rawCell` of each field, the derived cells after.
   * `into`: a spent batch's buffer to write them in, if it is large enough.
   */
  bytes(pks: RowOrder, values: StoreRows | undefined, into?: ArrayBuffer): Uint8Array {
    const w = new CsvBytes(pks.length * (bytesPerRow + 16), into);
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
