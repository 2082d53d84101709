import type Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { notFound } from "@/lib/http/errors";
import type { Filters } from "../../../filters";
import { sortWindow, windowCopy } from "../scan/order";
import type { RowOrder } from "../report-answerer";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { pageOf, round3, type CallDetail, type CallListRow, type CallParticipantDetail, type CallRef, type Page, type RecordingDetail } from "../../../report-types";
import { countMatching } from "../scan/cube";
import { matchKeys, startHead, type KeyedSelection } from "../scan/selection";
import { parseRawRecord } from "../../../raw-record";
import { getCallEvents } from "@/lib/ingest/call-events";
import { getCallClients } from "../../../clients";




/** Columns of a list row, `calls` aliased `c` (never `raw`: ~1.4 KB per call that the list does not show). */
const LIST_COLUMNS = `c.app_pk AS appPk, c.session_id AS sessionId, c.type, c.mode, c.status, c.initiator, c.receiver,
      c.receiver_type AS receiverType, c.initiated_at AS initiatedAt, c.started_at AS startedAt, c.ended_at AS endedAt,
      c.start_at AS startAt, c.has_recording AS hasRecording, c.total_audio_minutes AS totalAudioMinutes,
      c.total_video_minutes AS totalVideoMinutes, c.total_duration_minutes AS totalDurationMinutes,
      c.duration_seconds AS durationSeconds, c.total_participants AS totalParticipants`;

/**
 * Rows of the given pks, in the order given (a deleted pk yields nothing): json_each is
 * the outer loop (CROSS JOIN keeps it there) and each call is one rowid lookup. The pk
 * comes last, after the CSV's columns (CALL_RAW_COLUMNS), to check the order.
 */
const BY_PK_SQL = `SELECT ${LIST_COLUMNS}, c.pk AS pk FROM json_each(?) AS j CROSS JOIN calls c ON c.pk = j.value`;

const byPkStatements = new WeakMap<Database.Database, Database.Statement>();

function byPkStatement(db: Db): Database.Statement {
  const sqlite = db.$client;
  let stmt = byPkStatements.get(sqlite);
  if (!stmt) byPkStatements.set(sqlite, (stmt = sqlite.prepare(BY_PK_SQL)));
  return stmt;
}

/** The rows (objects, or arrays in LIST_COLUMNS order + pk) of `pks`, in that order. */
function rowsByPk<T>(db: Db, pks: ArrayLike<number>, raw: boolean): T[] {
  if (pks.length === 0) return [];
  const stmt = byPkStatement(db);
  const rows = (raw ? stmt.raw(true) : stmt.raw(false)).all(`[${Array.prototype.join.call(pks, ",")}]`) as T[];
  return inOrder(rows, pks, raw ? (r) => (r as unknown[])[PK_INDEX] as number : (r) => (r as { pk: number }).pk);
}

/** Whole raw rows of `pks` (LIST_COLUMNS order, app pk first, then the pk), in that order. */
export function rawRowsByPk(db: Db, pks: ArrayLike<number>): unknown[][] {
  return rowsByPk<unknown[]>(db, pks, true);
}

/** Index of the pk in a raw row: after the 18 list columns. */
const PK_INDEX = 18;

/**
 * `rows` in the order of `pks`. SQLite returns them so (the outer loop walks the list);
 * this checks it in one pass and reorders only if a future planner ever does otherwise.
 */
function inOrder<T>(rows: T[], pks: ArrayLike<number>, pkOf: (r: T) => number): T[] {
  let k = 0;
  for (const r of rows) {
    const pk = pkOf(r);
    while (k < pks.length && pks[k] !== pk) k++;
    if (k === pks.length) return reorder(rows, pks, pkOf);
    k++;
  }
  return rows; // a subsequence of pks: in order
}

function reorder<T>(rows: T[], pks: ArrayLike<number>, pkOf: (r: T) => number): T[] {
  const byPk = new Map(rows.map((r) => [pkOf(r), r]));
  const out: T[] = [];
  for (let i = 0; i < pks.length; i++) {
    const r = byPk.get(pks[i]);
    if (r !== undefined) out.push(r);
  }
  return out;
}

type RawListRow = Omit<CallListRow, "app" | "hasRecording"> & { appPk: number; hasRecording: number };

function toRow(r: RawListRow, appIds: Map<number, string>): CallListRow {
  const { appPk, pk: _pk, ...rest } = r as RawListRow & { pk?: number };
  return {
    ...rest,
    app: appIds.get(appPk) ?? String(appPk),
    hasRecording: r.hasRecording !== 0,
    totalAudioMinutes: round3(r.totalAudioMinutes),
    totalVideoMinutes: round3(r.totalVideoMinutes),
    totalDurationMinutes: round3(r.totalDurationMinutes),
  };
}

/** Number of calls matching the filters (a scan of the in-memory store). */
export function countCalls(db: Db, f: Filters, appPks: number[] | "all"): number {
  return countMatching(db, f, appPks);
}

/** Pks at positions [offset, offset + limit) of the list's order (all of it: limit = Infinity). */
function orderedPks(x: KeyedSelection, order: Filters["order"], offset: number, limit: number): RowOrder {
  const { store, sel, keys, count } = x;
  // `desc` is the exact reverse of (key, pk) ascending: positions counted from the end.
  const lo = Math.max(0, order === "asc" ? offset : count - offset - limit);
  const hi = Math.min(count, order === "asc" ? offset + limit : count - offset);
  if (hi <= lo) return new Int32Array(0);
  sortWindow(keys, sel, count, lo, hi);
  const pkCol = store.pk.a;
  const out = pkCol instanceof Float64Array ? new Float64Array(hi - lo) : new Int32Array(hi - lo);
  const asc = order === "asc";
  for (let k = lo; k < hi; k++) out[asc ? k - lo : hi - 1 - k] = pkCol[sel[k]];
  return out;
}

/** Pages sorted by start that end at most this deep come from startHead (scan/selection.ts). */
const HEAD_PAGE_LIMIT = 10_000;

/**
 * The calls matching the filters, one page, sorted by `sort`/`order` then pk — the
 * order, total and page come from the in-memory store (order.ts); only the page's rows
 * are read from SQLite, by pk, in the same read transaction (one snapshot).
 */
export function getCalls(db: Db, f: Filters, scope: Scope): Page<CallListRow> {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const offset = (f.page - 1) * f.perPage;
  const { total, rows } = db.$client.transaction(() => {
    if (f.sort === "start" && offset + f.perPage <= HEAD_PAGE_LIMIT) {
      // The first pages by start (what the dashboard opens on): from the blocks whose
      // start bounds can hold them, and the total from the block sums — no pass over
      // every call, no sort of every match. Same order, same snapshot.
      const h = startHead(db, f, appPks, offset + f.perPage, f.order !== "asc");
      const pkCol = h.store.pk.a;
      const pks = Array.from(h.slots.subarray(offset), (slot) => pkCol[slot]);
      return { total: countMatching(db, f, appPks), rows: rowsByPk<RawListRow>(db, pks, false) };
    }
    const x = matchKeys(db, f, appPks, f.sort);
    return { total: x.count, rows: rowsByPk<RawListRow>(db, orderedPks(x, f.order, offset, f.perPage), false) };
  })();
  return pageOf(rows.map((r) => toRow(r, appIds)), total, f);
}

/**
 * The pks of every call matching the filters, in the list's order: what the calls CSV
 * streams. Computed where the store lives (the analytics worker, which sends it back as
 * one typed array: 4 bytes per call), so the request's thread needs no store.
 */
export function callsOrder(db: Db, f: Filters, scope: Scope): RowOrder {
  const x = matchKeys(db, f, resolveApps(db, f, scope), f.sort);
  return orderedPks(x, f.order, 0, x.count);
}

/**
 * The list's order in two steps, from one snapshot: its first `n` pks at once (sorted
 * out of the matches without reordering them), and the whole order when `all` is called.
 * `all()` starts with the same `n` pks. What lets the calls CSV send its first rows
 * before sorting 10M keys.
 *
 * `own` (in-process): the matches are held in arrays of this order's own, so reports run
 * in between (and the store catching up for them) change nothing. Without it (the
 * worker, which calls `all` right after, in the same job) they stay in the shared
 * scratch: no 12 B per match allocated per export, and nothing may run in between.
 */
export function callsOrderHead(db: Db, f: Filters, scope: Scope, n: number, own = true): { head: RowOrder; all: () => RowOrder } {
  if (!own && f.sort === "start") {
    // The worker: the head from the blocks that can hold it (scan/selection.ts startHead: one or
    // two blocks for calls written in time order), then the whole order from the same
    // store state, not caught up in between (nothing runs between the two in the job).
    // In-process (`own`) the matches are taken first, as below: reports run between the
    // head and the rest may catch the store up, and the export keeps its first order.
    const appPks = resolveApps(db, f, scope);
    const h = startHead(db, f, appPks, n, f.order !== "asc");
    const pkCol = h.store.pk.a;
    const head = pkCol instanceof Float64Array ? new Float64Array(h.slots.length) : new Int32Array(h.slots.length);
    for (let k = 0; k < head.length; k++) head[k] = pkCol[h.slots[k]];
    return {
      head,
      all: () => {
        const x = matchKeys(db, f, appPks, f.sort, false, { asIs: true });
        return orderedPks(x, f.order, 0, x.count);
      },
    };
  }
  const x = matchKeys(db, f, resolveApps(db, f, scope), f.sort, own);
  const { store, sel, keys, count } = x;
  const asc = f.order === "asc";
  const lo = asc ? 0 : Math.max(0, count - n);
  const hi = asc ? Math.min(n, count) : count;
  const w = windowCopy(keys, sel, count, lo, hi);
  const pkCol = store.pk.a;
  const head = pkCol instanceof Float64Array ? new Float64Array(hi - lo) : new Int32Array(hi - lo);
  for (let k = 0; k < head.length; k++) head[asc ? k : head.length - 1 - k] = pkCol[w.slots[k]];
  return { head, all: () => orderedPks(x, f.order, 0, count) };
}

/** Rows per SQLite read of the object rows. */
const CSV_BATCH = 2048;

/** The calls CSV's rows as list rows (objects); the CSV itself streams `callsCsvBatches` (calls-csv.ts). */
export function iterateCalls(db: Db, f: Filters, scope: Scope, order?: RowOrder): IterableIterator<CallListRow> {
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const pks = order ?? callsOrder(db, f, scope);
  return (function* () {
    for (let i = 0; i < pks.length; i += CSV_BATCH) {
      for (const r of rowsByPk<RawListRow>(db, pks.subarray(i, i + CSV_BATCH), false)) yield toRow(r, appIds);
    }
  })();
}




/** One call with its participants and recordings; 404 when it does not exist or the
 * caller may not see its app. */
export function getCall(db: Db, ref: CallRef, scope: Scope): CallDetail {
  const app = visibleApps(db, scope).find((a) => a.appId === ref.app);
  if (!app) throw notFound(`app "${ref.app}" not found`);
  const row = db.get<RawListRow & { pk: number; mid: string | null; source: string; raw: string | null }>(sql`SELECT c.pk, c.app_pk AS appPk,
      c.session_id AS sessionId, c.mid, c.source, c.raw, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type AS receiverType,
      c.initiated_at AS initiatedAt, c.started_at AS startedAt, c.ended_at AS endedAt, c.start_at AS startAt, c.has_recording AS hasRecording,
      c.total_audio_minutes AS totalAudioMinutes, c.total_video_minutes AS totalVideoMinutes,
      c.total_duration_minutes AS totalDurationMinutes, c.duration_seconds AS durationSeconds, c.total_participants AS totalParticipants
    FROM calls c WHERE c.app_pk = ${app.pk} AND c.session_id = ${ref.sessionId}`);
  if (!row) throw notFound(`call "${ref.sessionId}" not found in app "${ref.app}"`);
  const participants = db
    .all<Omit<CallParticipantDetail, "isJoined"> & { isJoined: number }>(sql`SELECT seq, uid, state, is_joined AS isJoined,
      joined_at AS joinedAt, left_at AS leftAt, total_audio_minutes AS totalAudioMinutes, total_video_minutes AS totalVideoMinutes,
      total_duration_minutes AS totalDurationMinutes, device_id AS deviceId, mid
    FROM call_participants WHERE call_pk = ${row.pk} ORDER BY seq`)
    .map((p) => ({ ...p, isJoined: p.isJoined !== 0 }));
  const recordings = db.all<RecordingDetail>(sql`SELECT recording_url AS recordingUrl, recording_date AS recordingDate, duration,
      start_time AS startTime, received_ms AS receivedMs
    FROM recordings WHERE app_pk = ${app.pk} AND session_id = ${ref.sessionId} ORDER BY start_time, received_ms, recording_url, pk`);
  const { pk: _pk, mid, source, raw, ...rest } = row;
  const events = getCallEvents(db, app.pk, ref.sessionId);
  const clients = getCallClients(db, app.pk, ref.sessionId);
  return { ...toRow(rest, new Map([[app.pk, app.appId]])), mid, source, raw: parseRawRecord(raw), participants, recordings, events, clients };
}
