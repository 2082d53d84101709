import { raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, round3, type AppUsageRow, type DailyUsageRow, type Page, type ParticipantUsageRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { dayNumberToDate, localDayNumber, offsetSegments, offsetSql } from "@/lib/analytics/tz";
import { appScope, tablesOf, type ChContext } from "../context";
import { fromCalls, hasRecordingSql } from "../conditions";
import { minutes } from "./shared";

/** The participants, apps and daily reports. */

/**
 * Per (app, uid) over the matching calls: a uid listed twice in one call is one call
 * (its rows merged first: minutes summed, joined / unanswered if any row is), as the
 * in-memory engine counts "distinct calls". (Merging inside each call's arrays with
 * lambdas would spare the inner GROUP BY, but 18.16's analyser drops the columns such
 * lambdas capture from a subquery.)
 */
export function participantsQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  const t = tablesOf(ctx.ch);
  return sql`SELECT app_pk AS appPk, uid, count() AS calls, sum(j) AS joined, sum(u) AS unanswered, sum(a) AS audioX1000, sum(v) AS videoX1000,
      sum(tt) AS totalX1000, min(start_at) AS firstCallAt, max(start_at) AS lastCallAt
    FROM (
      SELECT app_pk, session_id, start_at, uid, max(pj) AS j, max(ifNull(ps = 'unanswered', 0)) AS u, sum(pa) AS a, sum(pv) AS v, sum(pt) AS tt
      FROM (SELECT app_pk, session_id, start_at, p_uid, p_is_joined, p_state, p_total_audio_minutes_x1000, p_total_video_minutes_x1000,
          p_total_duration_minutes_x1000 ${fromCalls(t, f, pks)})
      ARRAY JOIN p_uid AS uid, p_is_joined AS pj, p_state AS ps, p_total_audio_minutes_x1000 AS pa, p_total_video_minutes_x1000 AS pv,
        p_total_duration_minutes_x1000 AS pt
      GROUP BY app_pk, session_id, start_at, uid
    )
    GROUP BY app_pk, uid`;
}

/** How many participants (app × uid) the matching calls list. */
function participantsCountQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT count() AS n FROM (
      SELECT app_pk, uid FROM (SELECT app_pk, p_uid ${fromCalls(tablesOf(ctx.ch), f, pks)}) ARRAY JOIN p_uid AS uid GROUP BY app_pk, uid
    )`;
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
 * uses (lib/analytics/tz.ts: Node's time zone data, so +05:30, +05:45 and DST days agree
 * whatever the server's zone database).
 */
export async function getDailyUsage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<DailyUsageRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const from = fromCalls(t, f, apps.pks);
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    const [extent] = await ctx.ch.rows<{ n: number; min: number; max: number }>(sql`SELECT count() AS n, min(start_at) AS min, max(start_at) AS max ${from}`.text, signal);
    if (!extent || extent.n === 0) return [];
    lo ??= Math.floor(extent.min / 900) * 900;
    hi ??= Math.floor(extent.max / 900) * 900 + 900;
  }
  if (hi <= lo) return [];
  const first = localDayNumber(f.tz, lo);
  const days = Math.min(localDayNumber(f.tz, hi - 1) - first + 1, MAX_DAYS);
  const offset = raw(offsetSql(offsetSegments(f.tz, lo, hi), "start_at"));
  const rows = await ctx.ch.rows<{ day: number; calls: number; audioX1000: number; videoX1000: number; durS: number; parts: number }>(
    sql`SELECT toInt64(floor((start_at + ${offset}) / 86400)) AS day, count() AS calls, sum(total_audio_minutes_x1000) AS audioX1000,
        sum(total_video_minutes_x1000) AS videoX1000, sum(duration_seconds) AS durS, sum(total_participants) AS parts
      ${from} GROUP BY day`.text,
    signal,
  );
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
