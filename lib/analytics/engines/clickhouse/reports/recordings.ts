import { and, join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { hasRunningHours } from "@/lib/analytics/running-hours";
import { pageOf, type Page, type RecordingRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type AppScope, type ChContext } from "../context";
import { matchingCallKeysLocal, START } from "../conditions";
import { decodeClosed } from "@/lib/clickhouse/schema-v2";

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

/** `FROM recordings FINAL WHERE …`: the matching recordings (calls looked up shard by shard: co-sharded). */
function fromRecordings(ctx: ChContext, f: Filters, apps: AppScope): Sql {
  const t = tablesOf(ctx.ch);
  if (apps.pks.length === 0) return sql`FROM ${t.recordings} FINAL WHERE 0`;
  const conds: Array<Sql | undefined> = [sql`app_pk IN ${apps.pks}`, sql`deleted = 0`];
  if (f.from !== undefined) conds.push(sql`${raw(RECORDING_TIME)} >= ${f.from}`);
  if (f.to !== undefined) conds.push(sql`${raw(RECORDING_TIME)} < ${f.to}`);
  if (hasCallFilters(f)) {
    conds.push(sql`(app_pk, session_id) IN (${matchingCallKeysLocal(t, { ...f, from: undefined, to: undefined }, apps.pks)})`);
  }
  return sql`FROM ${t.recordings} FINAL WHERE ${and(conds)}`;
}

const ORDER = `ORDER BY ${RECORDING_TIME} DESC, received_ms DESC, app_pk DESC, session_id DESC, recording_url DESC`;

/** A recording as ClickHouse returns it (its call looked up afterwards). */
type RecordingRaw = Omit<RecordingRow, "app" | "callKnown" | "callType" | "callStartAt"> & { appPk: number };

const COLUMNS = `app_pk AS appPk, session_id AS sessionId, recording_url AS recordingUrl, recording_date AS recordingDate, duration,
  start_time AS startTime, received_ms AS receivedMs`;

/** The calls of a batch of recordings (synced and not deleted): type and start, by app and session. */
async function callsOf(ctx: ChContext, rows: RecordingRaw[], signal?: AbortSignal): Promise<Map<string, { type: string | null; startAt: number }>> {
  const out = new Map<string, { type: string | null; startAt: number }>();
  if (rows.length === 0) return out;
  const t = tablesOf(ctx.ch);
  const keys = join([...new Set(rows.map((r) => `${r.appPk}\u0000${r.sessionId}`))].map((k) => {
    const [app, session] = k.split("\u0000");
    return sql`(${Number(app)}, ${session})`;
  }), ", ");
  // The live rows of these calls: their keys, and the cancel rows among their own rows.
  const pks = [...new Set(rows.map((r) => r.appPk))];
  const found = await ctx.ch.rows<{ appPk: number; sessionId: string; callType: string | null; startAt: number }>(
    sql`SELECT app_pk AS appPk, session_id AS sessionId, ${raw(decodeClosed("type"))} AS callType, ${raw(START)} AS startAt FROM ${t.calls}
      WHERE app_pk IN ${pks} AND (app_pk, session_id) IN (${keys}) AND sign = 1
        AND (app_pk, session_id, version) NOT IN (SELECT app_pk, session_id, version FROM ${t.callsLocal} WHERE sign = -1 AND app_pk IN ${pks} AND (app_pk, session_id) IN (${keys}))`.text,
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
  const [count, rows] = await Promise.all([
    ctx.ch.rows<{ n: number }>(sql`SELECT count() AS n ${from}`.text, signal),
    ctx.ch.rows<RecordingRaw>(sql`SELECT ${raw(COLUMNS)} ${from} ${raw(ORDER)} LIMIT ${offset}, ${f.perPage}`.text, signal),
  ]);
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
