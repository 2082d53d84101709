import { notFound } from "@/lib/http/errors";
import { join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, type CallDetail, type CallListJsonRow, type CallListRow, type Page } from "@/lib/analytics/report-types";
import { parseRawRecord } from "@/lib/analytics/raw-record";
import type { Scope } from "@/lib/analytics/scope";
import { getCallClients } from "@/lib/analytics/clients";
import { getCallEvents } from "@/lib/ingest/call-events";
import { appScope, tablesOf, type AppScope, type ChContext, type Tables } from "../context";
import { fromCalls, hasRecordingSql } from "../conditions";
import { callKey, linksPerCall } from "./recording-status";
import { ARRIVAL_ORDER, minutes } from "./shared";

/**
 * The calls list (one page, its total), its CSV (every matching call, streamed in the
 * list's order) and one call with its participants and recordings.
 *
 * Order: the sort key, then arrival (`calls.arrival`: the SQLite pk when copied, the
 * sync's arrival clock otherwise), then (app, session id) for rows stored before arrival
 * was kept — in `desc` the exact reverse. The in-memory engine's order is the sort key,
 * then SQLite's pk: a copied warehouse lists calls with equal keys exactly as its source,
 * and a sync numbers new calls in the order SQLite would (docs/decisions/0014 §10).
 */

/** What a list row is made of (`calls` columns; has a recording computed). */
function listColumns(t: Tables, pks: readonly number[]): Sql {
  return sql`app_pk AS appPk, session_id AS sessionId, type, mode, status, initiator, receiver, receiver_type AS receiverType,
    initiated_at AS initiatedAt, started_at AS startedAt, ended_at AS endedAt, start_at AS startAt,
    ${hasRecordingSql(t, pks)} AS hasRecording, platform_has_recording AS flagged, total_audio_minutes_x1000 AS audioX1000, total_video_minutes_x1000 AS videoX1000,
    total_duration_minutes_x1000 AS durationX1000, duration_seconds AS durationSeconds, total_participants AS totalParticipants`;
}

/** A list row as ClickHouse returns it: the app's pk, the flag as 0/1, minutes in thousandths. */
type ListRowRaw = Omit<CallListRow, "app" | "hasRecording" | "totalAudioMinutes" | "totalVideoMinutes" | "totalDurationMinutes"> & {
  appPk: number;
  hasRecording: number;
  /** The platform's own flag (hasRecording: the flag or a link received). */
  flagged: number;
  audioX1000: number;
  videoX1000: number;
  durationX1000: number;
};

/** The sort key's expression: the values the in-memory engine sorts on (minutes: the same double sum). */
const SORT_KEYS: Record<Filters["sort"], string> = {
  start: "start_at",
  duration: "duration_seconds",
  participants: "total_participants",
  minutes: "(total_audio_minutes_x1000 / 1000 + total_video_minutes_x1000 / 1000)",
};

function orderBy(f: Filters): Sql {
  const dir = f.order === "asc" ? "ASC" : "DESC";
  return raw(`ORDER BY ${SORT_KEYS[f.sort]} ${dir}, ${ARRIVAL_ORDER(dir)}`);
}

function toRow(r: ListRowRaw, apps: AppScope): CallListRow {
  return {
    app: apps.appId(r.appPk),
    sessionId: r.sessionId,
    type: r.type,
    mode: r.mode,
    status: r.status,
    initiator: r.initiator,
    receiver: r.receiver,
    receiverType: r.receiverType,
    initiatedAt: r.initiatedAt,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    startAt: r.startAt,
    hasRecording: r.hasRecording !== 0,
    totalAudioMinutes: minutes(r.audioX1000),
    totalVideoMinutes: minutes(r.videoX1000),
    totalDurationMinutes: minutes(r.durationX1000),
    durationSeconds: r.durationSeconds,
    totalParticipants: r.totalParticipants,
  };
}

/**
 * The matching calls, one page, sorted by `sort`/`order`, with the total; each row with
 * its recording facts (the platform's flag, the links received: recording-status.ts).
 */
export async function getCalls(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<CallListJsonRow>> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const from = fromCalls(t, f, apps.pks);
  const offset = (f.page - 1) * f.perPage;
  const [count, keys] = await Promise.all([
    ctx.ch.rows<{ n: number }>(sql`SELECT count() AS n ${from}`.text, signal),
    ctx.ch.rows<{ appPk: number; sessionId: string }>(sql`SELECT app_pk AS appPk, session_id AS sessionId ${from} ${orderBy(f)} LIMIT ${offset}, ${f.perPage}`.text, signal),
  ]);
  const rows = await pageRows(ctx, t, keys, signal);
  const links = await linksPerCall(ctx, rows, signal);
  const data = rows.map((r) => ({ ...toRow(r, apps), recording: { flagged: r.flagged !== 0, links: links.get(callKey(r.appPk, r.sessionId)) ?? 0 } }));
  return pageOf(data, count[0]?.n ?? 0, f);
}

/**
 * The list rows of one page's calls, in the page's order. The page is found first by
 * its keys alone (a FINAL read of the sort and filter columns: the list's wide columns
 * would be read and sorted for every matching call), then its rows are read by key (the
 * table's primary key: a few granules). A call changed in between shows its newest
 * version; one deleted in between leaves the page one row short.
 */
async function pageRows(ctx: ChContext, t: Tables, keys: ReadonlyArray<{ appPk: number; sessionId: string }>, signal?: AbortSignal): Promise<ListRowRaw[]> {
  if (keys.length === 0) return [];
  const pks = [...new Set(keys.map((k) => k.appPk))];
  const found = await ctx.ch.rows<ListRowRaw>(
    sql`SELECT ${listColumns(t, pks)} FROM ${t.calls} FINAL
      WHERE app_pk IN ${pks} AND (app_pk, session_id) IN (${join(keys.map((k) => sql`(${k.appPk}, ${k.sessionId})`), ", ")}) AND deleted = 0`.text,
    signal,
  );
  const byKey = new Map(found.map((r) => [callKey(r.appPk, r.sessionId), r]));
  return keys.flatMap((k) => byKey.get(callKey(k.appPk, k.sessionId)) ?? []);
}

/** Rows per CSV batch. */
const CSV_BATCH = 2048;

/**
 * Every matching call in the list's order, as arrays in the CSV's column order
 * (CALL_RAW_COLUMNS: hasRecording as 0/1), in batches, streamed from ClickHouse as the
 * client reads. Apps are resolved (a 404 thrown) before the first batch is asked for.
 */
export function callsCsvBatches(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<unknown[][]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const query = sql`SELECT ${listColumns(t, apps.pks)} ${fromCalls(t, f, apps.pks)} ${orderBy(f)}`.text;
  return (async function* () {
    let batch: unknown[][] = [];
    for await (const r of ctx.ch.stream<ListRowRaw>(query, signal)) {
      batch.push([
        apps.appId(r.appPk), r.sessionId, r.type, r.mode, r.status, r.initiator, r.receiver, r.receiverType, r.initiatedAt, r.startedAt,
        r.endedAt, r.startAt, r.hasRecording, minutes(r.audioX1000), minutes(r.videoX1000), minutes(r.durationX1000), r.durationSeconds,
        r.totalParticipants,
      ]);
      if (batch.length >= CSV_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  })();
}

type DetailRaw = ListRowRaw & {
  mid: string | null;
  source: string;
  raw: string | null;
  p_seq: number[];
  p_uid: string[];
  p_state: Array<string | null>;
  p_is_joined: number[];
  p_audio: number[];
  p_video: number[];
  p_total: number[];
  p_device_id: Array<string | null>;
  p_joined_at: Array<number | null>;
  p_left_at: Array<number | null>;
  p_mid: Array<string | null>;
};

/**
 * One call with its participants (platform order), recordings and event log; 404 when it
 * does not exist or its app is not visible. The event log is the ingest's: read from the
 * local SQLite's stored deliveries, as the in-memory engine reads it (decision 0014 §12).
 */
export async function getCall(ctx: ChContext, ref: { app: string; sessionId: string }, scope: Scope, signal?: AbortSignal): Promise<CallDetail> {
  const apps = appScope(ctx, { apps: [] }, scope);
  const app = apps.visible.find((a) => a.appId === ref.app);
  if (!app) throw notFound(`app "${ref.app}" not found`);
  const t = tablesOf(ctx.ch);
  const key = sql`app_pk = ${app.pk} AND session_id = ${ref.sessionId}`;
  const [calls, recordings] = await Promise.all([
    ctx.ch.rows<DetailRaw>(
      sql`SELECT ${listColumns(t, [app.pk])}, mid, source, raw, p_seq, p_uid, p_state, p_is_joined, p_total_audio_minutes_x1000 AS p_audio,
        p_total_video_minutes_x1000 AS p_video, p_total_duration_minutes_x1000 AS p_total, p_device_id, p_joined_at, p_left_at, p_mid
      FROM ${t.calls} FINAL WHERE ${key} AND deleted = 0`.text,
      signal,
    ),
    ctx.ch.rows<CallDetail["recordings"][number]>(
      sql`SELECT recording_url AS recordingUrl, recording_date AS recordingDate, duration, start_time AS startTime, received_ms AS receivedMs
      FROM ${t.recordings} FINAL WHERE ${key} AND deleted = 0 ORDER BY start_time ASC NULLS FIRST, received_ms ASC, recording_url ASC`.text,
      signal,
    ),
  ]);
  const c = calls[0];
  if (!c) throw notFound(`call "${ref.sessionId}" not found in app "${ref.app}"`);
  const participants = c.p_seq
    .map((seq, i) => ({
      seq,
      uid: c.p_uid[i],
      state: c.p_state[i],
      isJoined: c.p_is_joined[i] !== 0,
      joinedAt: c.p_joined_at[i],
      leftAt: c.p_left_at[i],
      totalAudioMinutes: minutes(c.p_audio[i]),
      totalVideoMinutes: minutes(c.p_video[i]),
      totalDurationMinutes: minutes(c.p_total[i]),
      deviceId: c.p_device_id[i],
      mid: c.p_mid[i],
    }))
    .sort((a, b) => a.seq - b.seq);
  const events = getCallEvents(ctx.db(), app.pk, ref.sessionId);
  const clients = getCallClients(ctx.db(), app.pk, ref.sessionId);
  return { ...toRow(c, apps), mid: c.mid, source: c.source, raw: parseRawRecord(c.raw), participants, recordings, events, clients };
}
