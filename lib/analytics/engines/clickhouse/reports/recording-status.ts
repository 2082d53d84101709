import { and, join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, type AwaitingRecordingRow, type Page, type RecordingSummary } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type AppScope, type ChContext, type Tables } from "../context";
import { CALL_KEY, CALL_KEY_OF, CLOSED_VALUES, fromLiveCalls, START } from "../conditions";
import { callSumsSql } from "./call-sums";
import { filters } from "@/lib/analytics/filters";
import { hasCallFilters, RECORDING_TIME } from "./recordings";
import { ARRIVAL_ORDER } from "./shared";

/**
 * The platform's recording flag against the links `recording_generated` webhooks
 * delivered, as the in-memory engine answers them (its reports/recording-status.ts):
 * the summary over the matching calls, the flagged calls still awaiting their link, and
 * the calls list's per-row facts. `recordings` is co-sharded with `calls`, so "has a
 * link" is an IN over the shard's own recordings, evaluated shard by shard.
 */

/** 1 when a link was received for the call: the flag its writers keep in its state (calls_v2.has_link; lib/clickhouse/link-flags.ts). */
const HAS_LINK = raw("has_link = 1");

/** A recording's call as conditions.ts CALL_KEY names it (one UInt64: session code + app). */
const RECORDING_CALL_KEY = CALL_KEY_OF("session_id", "app_pk");

/**
 * The CALL_KEYs of the matching live calls that have a link, on a shard (for IN over its own
 * recordings, co-sharded). A call with a recording has `has_link = 1` in its live state (its
 * writers keep the flag: lib/clickhouse/link-flags.ts), so the links of the matching calls
 * are exactly the recordings whose call is in this set, and a recording whose call is not in
 * it has no live call. The set holds the linked calls only (a quarter of them in the bench
 * mix, not every matching call), as single integers rather than (app, session id) tuples.
 */
function linkedCallKeysLocal(t: Tables, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT ${raw(CALL_KEY)} ${fromLiveCalls(t, f, pks, {}, t.callsLocal)} AND ${HAS_LINK}`;
}

export async function getRecordingSummary(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<RecordingSummary> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const none: RecordingSummary = { flagged: 0, withLink: 0, awaiting: 0, linkNotFlagged: 0, links: 0, linksForUnsyncedCalls: 0 };
  if (apps.pks.length === 0) return none;
  const link = HAS_LINK;
  const [calls, links, unsynced] = await Promise.all([
    // The pre-aggregate's whole months and the signed rows around them (call-sums.ts).
    ctx.ch.rows<{ flagged: number; awaiting: number; withLink: number; notFlagged: number }>(
      sql`SELECT sumIf(c, platform_has_recording = 1) AS flagged, sumIf(c, platform_has_recording = 1 AND NOT ${link}) AS awaiting,
          sumIf(c, ${link}) AS withLink, sumIf(c, platform_has_recording = 0 AND ${link}) AS notFlagged
        FROM (${callSumsSql(t, f, apps.pks)})`.text,
      signal,
    ),
    // Every link of a matching call: its recordings (co-sharded, looked up on the recording's shard) against the matching calls with a link.
    ctx.ch.rows<{ n: number }>(
      sql`SELECT count() AS n FROM ${t.recordings} FINAL WHERE app_pk IN ${apps.pks} AND deleted = 0 AND ${raw(RECORDING_CALL_KEY)} IN (${linkedCallKeysLocal(t, f, apps.pks)})`.text,
      signal,
    ),
    // Links whose call is not synced (or was deleted), in the period of the recording's own time; none under call filters.
    hasCallFilters(f)
      ? Promise.resolve([{ n: 0 }])
      : ctx.ch.rows<{ n: number }>(
          sql`SELECT count() AS n FROM ${t.recordings} FINAL WHERE ${and([
            sql`app_pk IN ${apps.pks}`, raw("deleted = 0"),
            f.from !== undefined ? sql`${raw(RECORDING_TIME)} >= ${f.from}` : undefined,
            f.to !== undefined ? sql`${raw(RECORDING_TIME)} < ${f.to}` : undefined,
            sql`${raw(RECORDING_CALL_KEY)} NOT IN (${linkedCallKeysLocal(t, filters({ apps: f.apps }), apps.pks)})`,
          ])}`.text,
          signal,
        ),
  ]);
  const c = calls[0];
  return {
    flagged: c?.flagged ?? 0,
    withLink: c?.withLink ?? 0,
    awaiting: c?.awaiting ?? 0,
    linkNotFlagged: c?.notFlagged ?? 0,
    links: links[0]?.n ?? 0,
    linksForUnsyncedCalls: unsynced[0]?.n ?? 0,
  };
}

const AWAITING_COLUMNS = `app_pk AS appPk, session_id AS sessionId, ${CLOSED_VALUES}, initiator, receiver,
  ${START} AS startAt, ended_at AS endedAt, duration_seconds AS durationSeconds`;

/** Flagged calls without a link, newest first (ties: latest arrival first, as the in-memory engine's pk; calls.ts ARRIVAL_ORDER). */
function awaitingQuery(t: Tables, f: Filters, pks: readonly number[]): Sql {
  if (pks.length === 0) return sql`SELECT ${raw(AWAITING_COLUMNS)} FROM ${t.calls} WHERE 0`;
  return sql`SELECT ${raw(AWAITING_COLUMNS)} ${fromLiveCalls(t, f, pks)} AND platform_has_recording = 1 AND NOT ${HAS_LINK}`;
}

const AWAITING_ORDER = raw(`ORDER BY start_at DESC, ${ARRIVAL_ORDER("DESC")}`);

type AwaitingRaw = Omit<AwaitingRecordingRow, "app" | "type" | "mode" | "status"> & { appPk: number; callType: string | null; callMode: string | null; callStatus: string | null };

function toAwaitingRow(r: AwaitingRaw, apps: AppScope): AwaitingRecordingRow {
  return {
    app: apps.appId(r.appPk), sessionId: r.sessionId, type: r.callType, mode: r.callMode, status: r.callStatus, initiator: r.initiator, receiver: r.receiver,
    receiverType: r.receiverType, startAt: r.startAt, endedAt: r.endedAt, durationSeconds: r.durationSeconds,
  };
}

export async function getAwaitingRecordings(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<AwaitingRecordingRow>> {
  const apps = appScope(ctx, f, scope);
  const q = awaitingQuery(tablesOf(ctx.ch), f, apps.pks);
  const offset = (f.page - 1) * f.perPage;
  const [count, rows] = await Promise.all([
    ctx.ch.rows<{ n: number }>(sql`SELECT count() AS n FROM (${q})`.text, signal),
    ctx.ch.rows<AwaitingRaw>(sql`${q} ${AWAITING_ORDER} LIMIT ${offset}, ${f.perPage}`.text, signal),
  ]);
  return pageOf(rows.map((r) => toAwaitingRow(r, apps)), count[0]?.n ?? 0, f);
}

/** Every flagged call awaiting its link, newest first, streamed (the CSV). */
export function awaitingRecordingRows(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<AwaitingRecordingRow> {
  const apps = appScope(ctx, f, scope);
  const query = sql`${awaitingQuery(tablesOf(ctx.ch), f, apps.pks)} ${AWAITING_ORDER}`.text;
  return (async function* () {
    for await (const r of ctx.ch.stream<AwaitingRaw>(query, signal)) yield toAwaitingRow(r, apps);
  })();
}

/** Links received per call of `keys` (the calls list's page): by app pk and session id. */
export async function linksPerCall(ctx: ChContext, keys: ReadonlyArray<{ appPk: number; sessionId: string }>, signal?: AbortSignal): Promise<Map<string, number>> {
  const links = new Map<string, number>();
  if (keys.length === 0) return links;
  const t = tablesOf(ctx.ch);
  const pks = [...new Set(keys.map((k) => k.appPk))];
  const found = await ctx.ch.rows<{ appPk: number; sessionId: string; n: number }>(
    sql`SELECT app_pk AS appPk, session_id AS sessionId, count() AS n FROM ${t.recordings} FINAL
      WHERE app_pk IN ${pks} AND deleted = 0 AND (app_pk, session_id) IN (${join(keys.map((k) => sql`(${k.appPk}, ${k.sessionId})`), ", ")})
      GROUP BY app_pk, session_id`.text,
    signal,
  );
  for (const r of found) links.set(callKey(r.appPk, r.sessionId), r.n);
  return links;
}

export const callKey = (appPk: number, sessionId: string): string => `${appPk}\u0000${sessionId}`;
