import { notFound } from "@/lib/http/errors";
import { join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, type CallDetail, type CallListJsonRow, type CallListRow, type Page } from "@/lib/analytics/report-types";
import { parseRawRecord } from "@/lib/analytics/raw-record";
import type { Scope } from "@/lib/analytics/scope";
import { readCallClients } from "@/lib/analytics/clients";
import { readCallEvents } from "@/lib/ingest/call-events";
import { appScope, tablesOf, type AppScope, type ChContext, type Tables } from "../context";
import { CLOSED_VALUES, fromLiveCalls, fromSignedCalls, HAS_RECORDING, START } from "../conditions";
import { callSumsSql } from "./call-sums";
import { callKey, linksPerCall } from "./recording-status";
import { callsCsvBytes, callsCsvFields } from "./calls-csv";
import { decodeClosed } from "@/lib/clickhouse/schema-v2";
import { ARRIVAL_ORDER, atKeys, minutes, sessionCodeIn } from "./shared";

/**
 * The calls list (one page, its total), its CSV (every matching call, streamed in the
 * list's order) and one call with its participants and recordings.
 *
 * Order: the sort key, then arrival (`calls_v2.arrival`: the SQLite pk when copied, the
 * sync's arrival clock otherwise), then (app, session id) for rows stored before arrival
 * was kept — in `desc` the exact reverse. The in-memory engine's order is the sort key,
 * then SQLite's pk: a copied warehouse lists calls with equal keys exactly as its source,
 * and a sync numbers new calls in the order SQLite would (docs/decisions/0014 §10).
 */

/**
 * What a list row is made of (a live `calls_v2` row; has a recording computed). `flagOnly`:
 * hasRecording is the platform's flag alone, the caller adding the links it reads for the
 * rows themselves (a page's 50: looking them up by key instead of building every link's set).
 */
function listColumns(flagOnly = false): Sql {
  return sql`app_pk AS appPk, session_id AS sessionId, ${raw(CLOSED_VALUES)}, initiator, receiver,
    initiated_at AS initiatedAt, started_at AS startedAt, ended_at AS endedAt, ${raw(START)} AS startAt,
    ${raw(flagOnly ? "platform_has_recording" : HAS_RECORDING)} AS hasRecording, platform_has_recording AS flagged, total_audio_minutes_x1000 AS audioX1000, total_video_minutes_x1000 AS videoX1000,
    total_duration_minutes_x1000 AS durationX1000, duration_seconds AS durationSeconds, total_participants AS totalParticipants`;
}

/** A list row as ClickHouse returns it: the app's pk, the flag as 0/1, minutes in thousandths. */
type ListRowRaw = Omit<CallListRow, "app" | "type" | "mode" | "status" | "hasRecording" | "totalAudioMinutes" | "totalVideoMinutes" | "totalDurationMinutes"> & {
  appPk: number;
  callType: string | null;
  callMode: string | null;
  callStatus: string | null;
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
    type: r.callType,
    mode: r.callMode,
    status: r.callStatus,
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
 * An integer that orders the rows as the sort key does, not strictly: a row before another
 * in the list never has a smaller (`desc`; `asc`: larger) value. Minutes sort on the double
 * sum of the two thousandths (SORT_KEYS); two rows whose integer sums differ differ by at
 * least 0.001 minutes there, far more than the sum's rounding, so the integer sum orders them alike.
 */
const THRESHOLD_KEYS: Record<Exclude<Filters["sort"], "start">, string> = {
  duration: "duration_seconds",
  participants: "toInt64(total_participants)",
  minutes: "(total_audio_minutes_x1000 + total_video_minutes_x1000)",
};

/** Pages whose offset is below this are read alongside their total; deeper ones after it (an offset past the total reads nothing). */
const SHALLOW_OFFSET = 10_000;

/** Rounds of widening before the page is read over every matching row (each round at least doubles the rows asked for). */
const THRESHOLD_ROUNDS = 4;

/** The spans of starts the start-ordered page tries, from the newest (oldest) 15-minute bucket with calls: 15 minutes, then four times the last. */
const START_SPANS = Array.from({ length: 13 }, (_, i) => 900 * 4 ** i);

/** The first spans (15 minutes to 64 hours) are counted in one read, with the edge they start from. */
const SPANS_AT_ONCE = 5;

/** The largest second a DateTime holds. */
const MAX_DATETIME = 4_294_967_295;

/**
 * The total of the matching calls: the pre-aggregates' whole months and the signed rows of
 * the edges (call-sums.ts), or the signed rows alone under the filters no pre-aggregate answers.
 */
async function countCalls(ctx: ChContext, t: Tables, f: Filters, pks: readonly number[], signal?: AbortSignal): Promise<number> {
  const [count] = await ctx.ch.rows<{ n: number }>(sql`SELECT toInt64(sum(c)) AS n FROM (${callSumsSql(t, f, pks)})`.text, signal);
  return Number(count?.n ?? 0);
}

/** The live matching calls among the rows where `within` holds: their signs summed (a cancelled state and its cancel row add up to nothing). */
async function liveCount(ctx: ChContext, t: Tables, f: Filters, pks: readonly number[], within: Sql, signal?: AbortSignal): Promise<number> {
  const [live] = await ctx.ch.rows<{ n: number }>(sql`SELECT toInt64(sum(sign)) AS n ${fromSignedCalls(t, f, pks, { within })}`.text, signal);
  return Number(live?.n ?? 0);
}

/**
 * The calls page reads a prefix of its order only: a condition that holds for the first
 * `need` live matching calls (and few others), or undefined when the page is to be read
 * over every matching row. 18.16 reads and sorts every selected column of every matching
 * row before `ORDER BY … LIMIT` (it cannot stop reading in key order), so the page's read
 * is narrowed first. A set of rows is a prefix of the order when every row before one of
 * its rows is in it; it holds the page when at least `need` live calls are in it
 * (liveCount, one integer sum). In start order (startPrefix) the prefix is a range of starts
 * found by the key's index; in the other orders (keyPrefix) a bound on the sort key.
 */
function pagePrefix(ctx: ChContext, t: Tables, f: Filters, pks: readonly number[], need: number, signal?: AbortSignal): Promise<Sql | undefined> {
  return f.sort === "start" ? startPrefix(ctx, t, f, pks, need, signal) : keyPrefix(ctx, t, { ...f, sort: f.sort }, pks, need, signal);
}

/**
 * Start order: the newest (asc: oldest) starts, in spans four times wider each try
 * (START_SPANS), from the end of the newest (start of the oldest) 15-minute bucket holding
 * a live call of the apps, or `to` (`from`). That bucket is read from the pre-aggregates
 * (the newest month of `calls_by_month`, then its buckets in `calls_by_bucket`: a few
 * thousand rows); it is only where to begin, so their zone or filters do not matter. Each
 * try counts the span's live matching calls over the key's index range (app, start), the
 * first five at once: the first page of a busy warehouse reads the starts and signs of a
 * few hours of calls, then the rows of a quarter of an hour or so.
 */
async function startPrefix(ctx: ChContext, t: Tables, f: Filters, pks: readonly number[], need: number, signal?: AbortSignal): Promise<Sql | undefined> {
  const desc = f.order !== "asc";
  const months = sql`SELECT month, sum(calls) AS m FROM ${t.callsByMonth} WHERE app_pk IN ${pks} GROUP BY month HAVING m != 0`;
  const found = desc
    ? sql`SELECT toInt64(toUInt32(max(bucket))) + 900 FROM (SELECT bucket, sum(calls) AS c FROM ${t.callsByBucket}
        WHERE app_pk IN ${pks} AND bucket >= (SELECT toDateTime(max(month)) FROM (${months})) GROUP BY bucket HAVING c != 0)`
    : sql`SELECT toInt64(toUInt32(min(bucket))) FROM (SELECT bucket, sum(calls) AS c FROM ${t.callsByBucket}
        WHERE app_pk IN ${pks} AND bucket < (SELECT toDateTime(addMonths(min(month), 1)) FROM (${months})) GROUP BY bucket HAVING c != 0)`;
  const edgeSql = desc ? sql`least((${found}), ${Math.min(f.to ?? MAX_DATETIME, MAX_DATETIME)})` : sql`greatest((${found}), ${Math.max(f.from ?? 0, 0)})`;
  // Bounds clamped to a DateTime's seconds in SQL (the edge is only known there); JS checks each the same way below.
  const boundSql = (span: number) => raw(desc ? `toDateTime(greatest(edge - ${span}, 0))` : `toDateTime(least(edge + ${span}, ${MAX_DATETIME}))`);
  const spanCondition = (span: number) => sql`start_at ${raw(desc ? ">=" : "<")} ${boundSql(span)}`;
  // One read for the first spans (ClickHouse folds the edge's subquery to a constant before the shards read).
  const first = START_SPANS.slice(0, SPANS_AT_ONCE);
  const [probe] = await ctx.ch.rows<Record<string, string>>(
    sql`WITH (${edgeSql}) AS edge SELECT toString(edge) AS edgeAt, ${join(first.map((span, i) => sql`toString(sumIf(sign, ${spanCondition(span)})) AS n${raw(String(i))}`), ", ")}
      ${fromSignedCalls(t, f, pks, { within: spanCondition(first[first.length - 1]) })}`.text,
    signal,
  );
  const edge = Number(probe?.edgeAt ?? 0);
  const inRange = (bound: number) => (desc ? bound > (f.from ?? 0) : bound < Math.min(f.to ?? Infinity, MAX_DATETIME));
  const within = (bound: number) => (desc ? sql`start_at >= toDateTime(${bound})` : sql`start_at < toDateTime(${bound})`);
  for (const [i, span] of START_SPANS.entries()) {
    const bound = desc ? edge - span : edge + span;
    // The span reaches past the range (or a DateTime's): the prefix is every matching row.
    if (!inRange(bound)) return undefined;
    const n = i < first.length ? Number(probe?.[`n${i}`] ?? 0) : await liveCount(ctx, t, f, pks, within(bound), signal);
    if (n >= need) return within(bound);
  }
  return undefined;
}

/**
 * Other orders: a bound T on the sort's integer key (THRESHOLD_KEYS): the `need`-th largest
 * (asc: smallest) key among the matching +1 rows (states live or cancelled: no cancel-row
 * lookup), each shard sorting one integer column; the rows at or past T are a prefix. When
 * cancelled states ate some of them (re-synced calls among the first rows), it asks for
 * more rows and tries again.
 */
async function keyPrefix(ctx: ChContext, t: Tables, f: Filters & { sort: keyof typeof THRESHOLD_KEYS }, pks: readonly number[], need: number, signal?: AbortSignal): Promise<Sql | undefined> {
  const key = THRESHOLD_KEYS[f.sort];
  const desc = f.order !== "asc";
  // A quarter more than needed: cancelled states among the first rows (re-synced calls not yet merged) rarely need a second round.
  let ask = Math.ceil(need * 1.25) + 10;
  for (let round = 0; round < THRESHOLD_ROUNDS; round++) {
    const [edge] = await ctx.ch.rows<{ k: string }>(
      sql`SELECT toString(${raw(key)}) AS k ${fromSignedCalls(t, f, pks)} AND sign = 1 ORDER BY ${raw(key)} ${raw(desc ? "DESC" : "ASC")} LIMIT ${ask - 1}, 1`.text,
      signal,
    );
    // Fewer state rows than asked for: the page is among every matching row.
    if (!edge) return undefined;
    // An Int64 compared as the integer ClickHouse printed (a JS number could round it).
    const within = raw(`${key} ${desc ? ">=" : "<="} toInt64('${BigInt(edge.k).toString()}')`);
    const n = await liveCount(ctx, t, f, pks, within, signal);
    if (n >= need) return within;
    ask = Math.max(ask * 2, ask + 2 * (need - n));
  }
  return undefined;
}

/**
 * One page of live rows in the list's order, hasRecording as the platform's flag alone
 * (getCalls adds the links), read over the prefix of the order that holds it (pagePrefix;
 * the cancel rows looked up over it too). In start order that prefix is a range of the
 * key: one read. In the others its rows are spread over every granule, so the page's keys
 * are chosen first from the columns the order needs (not the text columns of every row),
 * and only their rows are then read whole, by key (app, start second: a few granules).
 */
async function pageRows(ctx: ChContext, t: Tables, f: Filters, pks: readonly number[], offset: number, signal?: AbortSignal): Promise<ListRowRaw[]> {
  if (pks.length === 0) return [];
  const within = await pagePrefix(ctx, t, f, pks, offset + f.perPage, signal);
  // A range of starts is a few granules of the key: read whole at once.
  if (f.sort === "start") {
    return ctx.ch.rows<ListRowRaw>(sql`SELECT ${listColumns(true)} ${fromLiveCalls(t, f, pks, { within })} ${orderBy(f)} LIMIT ${offset}, ${f.perPage}`.text, signal);
  }
  // (Aliases never name a column: an alias stands for its column in WHERE.)
  const keys = await ctx.ch.rows<{ appPk: number; sessionId: string; stateVersion: string; startAt: number }>(
    sql`SELECT app_pk AS appPk, session_id AS sessionId, toString(version) AS stateVersion, toUInt32(start_at) AS startAt
      ${fromLiveCalls(t, f, pks, { within })} ${orderBy(f)} LIMIT ${offset}, ${f.perPage}`.text,
    signal,
  );
  if (keys.length === 0) return [];
  const rows = await ctx.ch.rows<ListRowRaw & { stateVersion: string }>(
    sql`SELECT ${listColumns(true)}, toString(version) AS stateVersion FROM ${t.calls}
      PREWHERE ${sessionCodeIn(keys.map((k) => k.sessionId))}
      WHERE (${atKeys(keys)}) AND sign = 1 AND (app_pk, session_id, toString(version)) IN (${join(keys.map((k) => sql`(${k.appPk}, ${k.sessionId}, ${k.stateVersion})`), ", ")})`.text,
    signal,
  );
  const byKey = new Map(rows.map((r) => [`${r.appPk}\u0000${r.sessionId}\u0000${r.stateVersion}`, r]));
  return keys.map((k) => byKey.get(`${k.appPk}\u0000${k.sessionId}\u0000${k.stateVersion}`)).filter((r): r is ListRowRaw & { stateVersion: string } => r !== undefined);
}

/**
 * The matching calls, one page, sorted by `sort`/`order`, with the total; each row with
 * its recording facts (the platform's flag, the links received: recording-status.ts).
 * The total is read from the pre-aggregates where they answer (countCalls); the page reads
 * the live rows (no FINAL: conditions.ts) of the prefix of the order that holds it
 * (sortThreshold), each shard sorting its own and the first server merging the pages.
 */
export async function getCalls(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<CallListJsonRow>> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const offset = (f.page - 1) * f.perPage;
  let total: number;
  let rows: ListRowRaw[];
  if (offset < SHALLOW_OFFSET) {
    [total, rows] = await Promise.all([countCalls(ctx, t, f, apps.pks, signal), pageRows(ctx, t, f, apps.pks, offset, signal)]);
  } else {
    // A deep page past the last call is empty, and its prefix would sort every matching row: the total first.
    total = await countCalls(ctx, t, f, apps.pks, signal);
    rows = offset < total ? await pageRows(ctx, t, f, apps.pks, offset, signal) : [];
  }
  const links = await linksPerCall(ctx, rows, signal);
  // hasRecording: the flag (the rows' own) or a link (read for these rows by key).
  const data = rows.map((r) => {
    const n = links.get(callKey(r.appPk, r.sessionId)) ?? 0;
    return { ...toRow({ ...r, hasRecording: r.flagged !== 0 || n > 0 ? 1 : 0 }, apps), recording: { flagged: r.flagged !== 0, links: n } };
  });
  return pageOf(data, total, f);
}

/** The calls CSV's query (a SELECT of calls-csv.ts's fields, in the list's order) and the apps it reads. */
export function callsCsvQuery(ctx: ChContext, f: Filters, scope: Scope): { query: string; apps: AppScope } {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const fields = callsCsvFields(
    { type: decodeClosed("type"), mode: decodeClosed("mode"), status: decodeClosed("status"), receiverType: decodeClosed("receiver_type") },
    START,
    HAS_RECORDING,
  );
  return { query: sql`SELECT ${raw(fields)} ${fromLiveCalls(t, f, apps.pks)} ${orderBy(f)}`.text, apps };
}

/**
 * Every matching call in the list's order, as the CSV's lines (UTF-8 bytes): read from
 * ClickHouse in RowBinary and written by calls-csv.ts as the client reads. Apps are
 * resolved (a 404 thrown) before the first batch is asked for; the ISO columns are in the
 * filters' zone.
 */
export function callsCsvBatches(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<Uint8Array> {
  const { query, apps } = callsCsvQuery(ctx, f, scope);
  return callsCsvBytes(ctx.ch, query, apps, f.tz, signal);
}

/** A signed row of one call: the live state is the version whose signs do not sum to 0. */
type DetailRaw = ListRowRaw & { sign: number; version: number };

/** One call's by-key row (call_raw: v1's call columns): what only its page shows. */
interface CallRawDetail {
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
}

/** The rows (state and cancel rows alike: identical values) whose signs add up to more than 0, one each. */
function liveOf<T extends { sign: number }>(rows: T[], key: (r: T) => string): T[] {
  const sums = new Map<string, { row: T; sum: number }>();
  for (const r of rows) {
    const k = key(r);
    const s = sums.get(k);
    if (s) s.sum += r.sign;
    else sums.set(k, { row: r, sum: r.sign });
  }
  return [...sums.values()].filter((s) => s.sum > 0).map((s) => s.row);
}

/**
 * One call with its participants (platform order), recordings and event log; 404 when it
 * does not exist or its app is not visible. Every read is bounded to the call's key: its
 * signed rows (the live version chosen here: whether the call exists, and the columns the
 * list shows), and its by-key row (`call_raw` FINAL over one key: mid, source, the raw
 * record and the participants with their details, which the signed rows do not keep).
 * The event log is the ingest's: read from the local SQLite's stored deliveries, as the
 * in-memory engine reads it (decision 0014 §12).
 */
export async function getCall(ctx: ChContext, ref: { app: string; sessionId: string }, scope: Scope, signal?: AbortSignal): Promise<CallDetail> {
  const apps = appScope(ctx, { apps: [] }, scope);
  const app = apps.visible.find((a) => a.appId === ref.app);
  if (!app) throw notFound(`app "${ref.app}" not found`);
  const t = tablesOf(ctx.ch);
  const key = sql`app_pk = ${app.pk} AND session_id = ${ref.sessionId}`;
  const [versions, recordings, raws] = await Promise.all([
    ctx.ch.rows<DetailRaw>(sql`SELECT sign, version, ${listColumns()} FROM ${t.calls} WHERE ${key}`.text, signal),
    ctx.ch.rows<CallDetail["recordings"][number]>(
      sql`SELECT recording_url AS recordingUrl, recording_date AS recordingDate, duration, start_time AS startTime, received_ms AS receivedMs
      FROM ${t.recordings} FINAL WHERE ${key} AND deleted = 0 ORDER BY start_time ASC NULLS FIRST, received_ms ASC, recording_url ASC`.text,
      signal,
    ),
    ctx.ch.rows<CallRawDetail>(
      sql`SELECT mid, source, raw, p_seq, p_uid, p_state, p_is_joined, p_total_audio_minutes_x1000 AS p_audio, p_total_video_minutes_x1000 AS p_video,
        p_total_duration_minutes_x1000 AS p_total, p_device_id, p_joined_at, p_left_at, p_mid
      FROM ${t.callRaw} FINAL WHERE ${key} AND deleted = 0`.text,
      signal,
    ),
  ]);
  const c = liveOf(versions, (r) => String(r.version)).sort((a, b) => b.version - a.version)[0];
  if (!c) throw notFound(`call "${ref.sessionId}" not found in app "${ref.app}"`);
  const d = raws[0];
  const participants = (d?.p_seq ?? [])
    .map((seq, i) => ({
      seq,
      uid: d.p_uid[i],
      state: d.p_state[i],
      isJoined: d.p_is_joined[i] !== 0,
      joinedAt: d.p_joined_at[i],
      leftAt: d.p_left_at[i],
      totalAudioMinutes: minutes(d.p_audio[i]),
      totalVideoMinutes: minutes(d.p_video[i]),
      totalDurationMinutes: minutes(d.p_total[i]),
      deviceId: d.p_device_id[i],
      mid: d.p_mid[i],
    }))
    .sort((a, b) => a.seq - b.seq);
  const events = await readCallEvents(ctx.db(), app.pk, ref.sessionId);
  const clients = await readCallClients(ctx.db(), app.pk, ref.sessionId);
  return { ...toRow(c, apps), mid: d?.mid ?? null, source: d?.source ?? "sync", raw: parseRawRecord(d?.raw ? d.raw : null), participants, recordings, events, clients };
}
