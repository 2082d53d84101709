import { and, join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { hasRunningHours } from "@/lib/analytics/running-hours";
import { pageOf, type Page, type RecordingRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type AppScope, type ChContext } from "../context";
import { matchingCallKeysLocal, START } from "../conditions";
import { decodeClosed } from "@/lib/clickhouse/schema-v2";
import { atKeys, sessionCodeIn } from "./shared";

/**
 * Recordings, newest first (by startTime, else arrival second), with the in-memory
 * engine's meaning: `from`/`to` apply to that time; call filters (type, uid, …) keep only
 * recordings whose call is synced and matches. Ties: latest received first, then app,
 * session id and URL (bytes), newest first — the in-memory engine's order too
 * (decision 0014 §10).
 */

export function hasCallFilters(f: Filters): boolean {
  return f.type !== undefined || f.mode !== undefined || f.status !== undefined || f.receiverType !== undefined ||
    f.hasRecording !== undefined || f.participantsCount !== undefined || f.uid !== undefined || hasRunningHours(f);
}

/** A recording's time: its start, else the second it was received. */
export const RECORDING_TIME = "coalesce(start_time, intDiv(received_ms, 1000))";

/**
 * `FROM recordings FINAL WHERE …`: the matching recordings (calls looked up shard by shard:
 * co-sharded). `keys`: only the recordings of these calls, a condition on the table's key
 * prefix (app, session), so FINAL still sees every row of each recording it reads.
 */
function fromRecordings(ctx: ChContext, f: Filters, apps: AppScope, keys?: Sql): Sql {
  const t = tablesOf(ctx.ch);
  if (apps.pks.length === 0) return sql`FROM ${t.recordings} FINAL WHERE 0`;
  const conds: Array<Sql | undefined> = [sql`app_pk IN ${apps.pks}`, sql`deleted = 0`, keys];
  conds.push(...timeConditions(f));
  if (hasCallFilters(f)) {
    conds.push(sql`(app_pk, session_id) IN (${matchingCallKeysLocal(t, { ...f, from: undefined, to: undefined }, apps.pks)})`);
  }
  return sql`FROM ${t.recordings} FINAL WHERE ${and(conds)}`;
}

/** from/to on a recording's time (RECORDING_TIME). */
function timeConditions(f: Filters): Sql[] {
  const out: Sql[] = [];
  if (f.from !== undefined) out.push(sql`${raw(RECORDING_TIME)} >= ${f.from}`);
  if (f.to !== undefined) out.push(sql`${raw(RECORDING_TIME)} < ${f.to}`);
  return out;
}

/** Rounds of widening before the page is read over every matching recording (each round at least doubles the rows asked for). */
const PREFIX_ROUNDS = 4;

/**
 * The first `need` recordings in the list's order, or undefined when there are fewer
 * stored rows than that (the caller reads every matching recording). Without FINAL over
 * every link: `recordings` is a ReplacingMergeTree, and FINAL merges every stored row's
 * key before the sort (2.5M links at 10M calls). Instead:
 *   1. T, the `need`-th latest time (RECORDING_TIME) among the stored rows of the apps
 *      not marked deleted, whatever their version (one integer sorted per shard);
 *   2. the recordings of the calls having such a row at or after T, read with FINAL
 *      (co-sharded, by the key's prefix: a few granules each) and filtered as the page
 *      is, then kept when their own time is at or after T.
 * A recording of the page has a stored row (its newest version) at or after T, so its call
 * is among those read; and every recording at or after T sorts before every one before it.
 * When fewer than `need` remain (older versions of redelivered recordings, recordings the
 * call filters leave out), it asks for more rows and tries again.
 */
async function firstRecordings(ctx: ChContext, f: Filters, apps: AppScope, need: number, signal?: AbortSignal): Promise<RecordingRaw[] | undefined> {
  const t = tablesOf(ctx.ch);
  const stored = and([sql`app_pk IN ${apps.pks}`, raw("deleted = 0"), ...timeConditions(f)]);
  let ask = need;
  for (let round = 0; round < PREFIX_ROUNDS; round++) {
    const [edge] = await ctx.ch.rows<{ k: string }>(
      sql`SELECT toString(${raw(RECORDING_TIME)}) AS k FROM ${t.recordings} WHERE ${stored} ORDER BY ${raw(RECORDING_TIME)} DESC LIMIT ${ask - 1}, 1`.text,
      signal,
    );
    if (!edge) return undefined;
    // An Int64 compared as the integer ClickHouse printed (a JS number could round it).
    const after = raw(`${RECORDING_TIME} >= toInt64('${BigInt(edge.k).toString()}')`);
    const calls = sql`(app_pk, session_id) IN (SELECT app_pk, session_id FROM ${t.recordingsLocal} WHERE ${stored} AND ${after})`;
    const rows = await ctx.ch.rows<RecordingRaw>(
      sql`SELECT ${raw(COLUMNS)} FROM (SELECT ${raw(STORED_COLUMNS)} ${fromRecordings(ctx, f, apps, calls)}) WHERE ${after} ${raw(ORDER)} LIMIT ${need}`.text,
      signal,
    );
    if (rows.length >= need) return rows;
    ask = Math.max(ask * 2, ask + 2 * (need - rows.length));
  }
  return undefined;
}

const ORDER = `ORDER BY ${RECORDING_TIME} DESC, received_ms DESC, app_pk DESC, session_id DESC, recording_url DESC`;

/** A recording as ClickHouse returns it (its call looked up afterwards). */
type RecordingRaw = Omit<RecordingRow, "app" | "callKnown" | "callType" | "callStartAt"> & { appPk: number };

const COLUMNS = `app_pk AS appPk, session_id AS sessionId, recording_url AS recordingUrl, recording_date AS recordingDate, duration,
  start_time AS startTime, received_ms AS receivedMs`;

/** The stored columns COLUMNS and ORDER read, under their own names (a subquery's, filtered and sorted outside it). */
const STORED_COLUMNS = "app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms";

/** The calls of a batch of recordings (synced and not deleted): type and start, by app and session. */
async function callsOf(ctx: ChContext, rows: RecordingRaw[], signal?: AbortSignal): Promise<Map<string, { type: string | null; startAt: number }>> {
  const out = new Map<string, { type: string | null; startAt: number }>();
  if (rows.length === 0) return out;
  const t = tablesOf(ctx.ch);
  const keys = join([...new Set(rows.map((r) => `${r.appPk}\u0000${r.sessionId}`))].map((k) => {
    const [app, session] = k.split("\u0000");
    return sql`(${Number(app)}, ${session})`;
  }), ", ");
  const pks = [...new Set(rows.map((r) => r.appPk))];
  // calls_v2 is ordered by (app, start, session): a session alone is not in its index. The
  // start seconds of these calls' rows first, from the session code (one integer a row, not
  // the session id's ~36 bytes; a hash collision only adds a second to read)…
  const starts = await ctx.ch.rows<{ appPk: number; startAt: number }>(
    sql`SELECT DISTINCT app_pk AS appPk, toUInt32(start_at) AS startAt FROM ${t.calls} WHERE app_pk IN ${pks} AND ${sessionCodeIn(rows.map((r) => r.sessionId))}`.text,
    signal,
  );
  if (starts.length === 0) return out;
  const atStarts = atKeys(starts);
  // …then their rows by the index (app, start second): the live ones, their cancel rows looked up among the same.
  const found = await ctx.ch.rows<{ appPk: number; sessionId: string; callType: string | null; startAt: number }>(
    sql`SELECT app_pk AS appPk, session_id AS sessionId, ${raw(decodeClosed("type"))} AS callType, ${raw(START)} AS startAt FROM ${t.calls}
      WHERE (${atStarts}) AND (app_pk, session_id) IN (${keys}) AND sign = 1
        AND (app_pk, session_id, version) NOT IN (SELECT app_pk, session_id, version FROM ${t.callsLocal} WHERE sign = -1 AND (${atStarts}) AND (app_pk, session_id) IN (${keys}))`.text,
    signal,
  );
  for (const c of found) out.set(`${c.appPk}\u0000${c.sessionId}`, { type: c.callType, startAt: c.startAt });
  return out;
}

async function toRows(ctx: ChContext, rows: RecordingRaw[], apps: AppScope, signal?: AbortSignal): Promise<RecordingRow[]> {
  const calls = await callsOf(ctx, rows, signal);
  return rows.map((r) => {
    const c = calls.get(`${r.appPk}\u0000${r.sessionId}`);
    return {
      app: apps.appId(r.appPk), sessionId: r.sessionId, recordingUrl: r.recordingUrl, recordingDate: r.recordingDate, duration: r.duration,
      startTime: r.startTime, receivedMs: r.receivedMs, callKnown: c !== undefined, callType: c?.type ?? null, callStartAt: c?.startAt ?? null,
    };
  });
}

export async function getRecordings(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<RecordingRow>> {
  const apps = appScope(ctx, f, scope);
  const from = fromRecordings(ctx, f, apps);
  const offset = (f.page - 1) * f.perPage;
  const page = async (): Promise<RecordingRaw[]> => {
    const first = apps.pks.length === 0 ? [] : await firstRecordings(ctx, f, apps, offset + f.perPage, signal);
    if (first) return first.slice(offset);
    return ctx.ch.rows<RecordingRaw>(sql`SELECT ${raw(COLUMNS)} ${from} ${raw(ORDER)} LIMIT ${offset}, ${f.perPage}`.text, signal);
  };
  const [count, rows] = await Promise.all([ctx.ch.rows<{ n: number }>(sql`SELECT count() AS n ${from}`.text, signal), page()]);
  return pageOf(await toRows(ctx, rows, apps, signal), count[0]?.n ?? 0, f);
}

/** Every matching recording, newest first, in batches (the CSV), streamed. */
export function recordingBatches(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<RecordingRow[]> {
  const apps = appScope(ctx, f, scope);
  const query = sql`SELECT ${raw(COLUMNS)} ${fromRecordings(ctx, f, apps)} ${raw(ORDER)}`.text;
  return (async function* () {
    let batch: RecordingRaw[] = [];
    for await (const r of ctx.ch.stream<RecordingRaw>(query, signal)) {
      batch.push(r);
      if (batch.length >= 1000) {
        yield await toRows(ctx, batch, apps, signal);
        batch = [];
      }
    }
    if (batch.length > 0) yield await toRows(ctx, batch, apps, signal);
  })();
}
