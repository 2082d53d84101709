import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, round3, type AppUsageRow, type DailyUsageRow, type Page, type ParticipantUsageRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { dayNumberToDate, localDayNumber, offsetSegments, offsetSql } from "@/lib/time/tz";
import { appScope, tablesOf, type ChContext } from "../context";
import { callConditions, fromCalls, hasRecordingSql } from "../conditions";
import { minutes } from "./shared";

/** The participants, apps and daily reports. */

/**
 * The participant rows of the matching calls, unnested where the calls are read: `FROM
 * calls FINAL ARRAY JOIN … WHERE …` in one SELECT, so that over a Distributed table each
 * shard unnests and aggregates its own calls and sends only its (app, uid) groups (a
 * subquery would ship every participant row to the first shard). Conditions are on the
 * call's columns: after ARRAY JOIN they keep or drop all of a call's rows together.
 * `columns` may name `uid` and, per row, `occ` (1 on the uid's first row in its call),
 * `pj` / `occ_j` (joined, and 1 on the uid's first row with that joined flag), `pu` /
 * `occ_u` (the same for state unanswered), `pa` / `pv` / `pt` (minutes in thousandths).
 */
function unnestedParticipants(ctx: ChContext, f: Filters, pks: readonly number[], columns: Sql, tail: Sql, arrays = FULL_ROWS, rows: Sql[] = []): Sql {
  const t = tablesOf(ctx.ch);
  return sql`SELECT ${columns} FROM ${t.calls} FINAL ARRAY JOIN ${arrays} WHERE ${and([...callConditions(t, f, pks), ...rows])} ${tail}`;
}

/**
 * The participants reports' `person` search on the unnested rows (lib/analytics/person.ts:
 * the uid contains the text, ASCII letters without case); none without one.
 */
function personRows(f: Filters): Sql[] {
  return f.person === undefined ? [] : [sql`positionCaseInsensitive(uid, ${f.person}) > 0`];
}

/** Every per-row array the participants report needs (unnestedParticipants). */
const FULL_ROWS = raw(`p_uid AS uid, arrayEnumerateUniq(p_uid) AS occ, p_is_joined AS pj, arrayEnumerateUniq(p_uid, p_is_joined) AS occ_j,
  arrayMap(s -> toUInt8(ifNull(s = 'unanswered', 0)), p_state) AS pu,
  arrayEnumerateUniq(p_uid, arrayMap(s -> toUInt8(ifNull(s = 'unanswered', 0)), p_state)) AS occ_u,
  p_total_audio_minutes_x1000 AS pa, p_total_video_minutes_x1000 AS pv, p_total_duration_minutes_x1000 AS pt`);

/** Each uid once per call: what counting participants and their calls needs (every array joined is computed). */
const DISTINCT_UIDS = raw("arrayDistinct(p_uid) AS uid");

/**
 * Per (app, uid) over the matching calls: a uid listed twice in one call is one call (its
 * rows merged: minutes summed, joined / unanswered if any row is), as the in-memory
 * engine counts "distinct calls" — counted on the uid's first row in the call
 * (`arrayEnumerateUniq`), with no per-call GROUP BY: each shard aggregates straight to
 * (app, uid), in memory bounded by the participants, not the calls.
 */
export function participantsQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return unnestedParticipants(
    ctx, f, pks,
    raw(`app_pk AS appPk, uid, countIf(occ = 1) AS calls, countIf(pj = 1 AND occ_j = 1) AS joined, countIf(pu = 1 AND occ_u = 1) AS unanswered,
      sum(pa) AS audioX1000, sum(pv) AS videoX1000, sum(pt) AS totalX1000, min(start_at) AS firstCallAt, max(start_at) AS lastCallAt`),
    raw("GROUP BY app_pk, uid"),
    FULL_ROWS,
    personRows(f),
  );
}

/** How many participants (app × uid) the matching calls list. */
function participantsCountQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT count() AS n FROM (${unnestedParticipants(ctx, f, pks, raw("app_pk, uid"), raw("GROUP BY app_pk, uid"), DISTINCT_UIDS, personRows(f))})`;
}

/** How many distinct uids (across apps) the matching calls list. */
export function uidCountQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT count() AS n FROM (${unnestedParticipants(ctx, f, pks, raw("uid"), raw("GROUP BY uid"), DISTINCT_UIDS, personRows(f))})`;
}

/** Per (app, uid): the number of distinct matching calls listing it (the engagement report's input). */
export function callsPerParticipantQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return unnestedParticipants(ctx, f, pks, raw("app_pk, uid, count() AS calls"), raw("GROUP BY app_pk, uid"), DISTINCT_UIDS);
}

/**
 * Participants in the requested order: by calls (most first), or `sort=minutes` by
 * total minutes then calls; then app and uid (bytes), or `ties` — `order=asc` the exact reverse.
 */
export function participantsOrder(f: Filters, ties: readonly string[] = ["appPk", "uid"]): Sql {
  const d = f.order === "asc" ? "ASC" : "DESC";
  const a = f.order === "asc" ? "DESC" : "ASC";
  const keys = f.sort === "minutes" ? `totalX1000 ${d}, calls ${d}` : `calls ${d}`;
  return raw(`ORDER BY ${keys}, ${ties.map((t) => `${t} ${a}`).join(", ")}`);
}

export interface ParticipantRaw {
  appPk: number;
  uid: string;
  calls: number;
  joined: number;
  unanswered: number;
  audioX1000: number;
  videoX1000: number;
  totalX1000: number;
  firstCallAt: number;
  lastCallAt: number;
}

function participantRow(r: ParticipantRaw, appId: (pk: number) => string): ParticipantUsageRow {
  return {
    app: appId(r.appPk), uid: r.uid, calls: r.calls, joined: r.joined, unanswered: r.unanswered,
    audioMinutes: minutes(r.audioX1000), videoMinutes: minutes(r.videoX1000), totalMinutes: minutes(r.totalX1000),
    firstCallAt: r.firstCallAt, lastCallAt: r.lastCallAt,
  };
}

/** One page of the participants report, in its order, with the total number of participants. */
export async function getParticipantsPage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<ParticipantUsageRow>> {
  const apps = appScope(ctx, f, scope);
  const q = participantsQuery(ctx, f, apps.pks);
  const offset = (f.page - 1) * f.perPage;
  const [count, rows] = await Promise.all([
    ctx.ch.rows<{ n: number }>(participantsCountQuery(ctx, f, apps.pks).text, signal),
    ctx.ch.rows<ParticipantRaw>(sql`${q} ${participantsOrder(f)} LIMIT ${offset}, ${f.perPage}`.text, signal),
  ]);
  return pageOf(rows.map((r) => participantRow(r, apps.appId)), count[0]?.n ?? 0, f);
}

/** Every participant, in the report's order, streamed (the CSV). */
export function participantRows(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<ParticipantUsageRow> {
  const apps = appScope(ctx, f, scope);
  const query = sql`${participantsQuery(ctx, f, apps.pks)} ${participantsOrder(f)}`.text;
  return (async function* () {
    for await (const r of ctx.ch.stream<ParticipantRaw>(query, signal)) yield participantRow(r, apps.appId);
  })();
}

/** Per tenant app the caller may see (each requested app, even with no calls), in app id order. */
export async function getAppUsage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<AppUsageRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const rows = await ctx.ch.rows<{ appPk: number; calls: number; audioX1000: number; videoX1000: number; recordings: number; participants: number }>(
    sql`SELECT app_pk AS appPk, count() AS calls, sum(total_audio_minutes_x1000) AS audioX1000, sum(total_video_minutes_x1000) AS videoX1000,
        sum(${hasRecordingSql(t, apps.pks)}) AS recordings, uniqExactArray(p_uid) AS participants
      ${fromCalls(t, f, apps.pks)} GROUP BY app_pk`.text,
    signal,
  );
  const byPk = new Map(rows.map((r) => [r.appPk, r]));
  const wanted = new Set(apps.pks);
  return apps.visible
    .filter((a) => wanted.has(a.pk))
    .map((a) => {
      const r = byPk.get(a.pk);
      const audio = r?.audioX1000 ?? 0;
      const video = r?.videoX1000 ?? 0;
      return {
        app: a.appId, name: a.name, calls: r?.calls ?? 0, audioMinutes: minutes(audio), videoMinutes: minutes(video),
        totalMinutes: minutes(audio + video), recordings: r?.recordings ?? 0, participants: r?.participants ?? 0,
      };
    });
}

/** Longest range the daily report fills with zero days (as the in-memory engine). */
const MAX_DAYS = 366 * 20;

/**
 * Per local day in `tz`, every day from `from` to `to` (or the matching calls' first to
 * last day), days without calls as zeros. A call's day is that of its start with the
 * zone's offset at that instant, from the same offset segments the in-memory engine
 * uses (lib/time/tz.ts: Node's time zone data, so +05:30, +05:45 and DST days agree
 * whatever the server's zone database).
 */
export async function getDailyUsage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<DailyUsageRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const from = fromCalls(t, f, apps.pks);
  // The zone's offsets over a range holding every matching call's start: [from, to) when
  // given, else the bounds of every stored start of these apps (all versions, no FINAL:
  // a cheap read of one column), so that one FINAL read gives the days and the matching
  // calls' own extent.
  let segLo = f.from;
  let segHi = f.to;
  if (segLo === undefined || segHi === undefined) {
    const [b] = await ctx.ch.rows<{ n: number; min: number; max: number }>(
      sql`SELECT count() AS n, min(start_at) AS min, max(start_at) AS max FROM ${t.calls} WHERE app_pk IN ${apps.pks.length ? apps.pks : [0]} AND deleted = 0`.text,
      signal,
    );
    if (!b || b.n === 0) return [];
    segLo ??= b.min;
    segHi ??= b.max + 1;
  }
  if (segHi <= segLo) return [];
  const offset = raw(offsetSql(offsetSegments(f.tz, segLo, segHi), "start_at"));
  const rows = await ctx.ch.rows<{ day: number; calls: number; audioX1000: number; videoX1000: number; durS: number; parts: number; min: number; max: number }>(
    sql`SELECT toInt64(floor((start_at + ${offset}) / 86400)) AS day, count() AS calls, sum(total_audio_minutes_x1000) AS audioX1000,
        sum(total_video_minutes_x1000) AS videoX1000, sum(duration_seconds) AS durS, sum(total_participants) AS parts,
        min(start_at) AS min, max(start_at) AS max
      ${from} GROUP BY day`.text,
    signal,
  );
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    if (rows.length === 0) return [];
    lo ??= Math.floor(Math.min(...rows.map((r) => r.min)) / 900) * 900;
    hi ??= Math.floor(Math.max(...rows.map((r) => r.max)) / 900) * 900 + 900;
  }
  if (hi <= lo) return [];
  const first = localDayNumber(f.tz, lo);
  const days = Math.min(localDayNumber(f.tz, hi - 1) - first + 1, MAX_DAYS);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return Array.from({ length: days }, (_, d) => {
    const r = byDay.get(first + d);
    const n = r?.calls ?? 0;
    return {
      date: dayNumberToDate(first + d),
      calls: n,
      audioMinutes: minutes(r?.audioX1000 ?? 0),
      videoMinutes: minutes(r?.videoX1000 ?? 0),
      avgDurationSeconds: n ? round3(r!.durS / n) : 0,
      avgParticipants: n ? round3(r!.parts / n) : 0,
    };
  });
}
