import { and, join, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, round3, type AppUsageRow, type DailyUsageRow, type Page, type ParticipantUsageRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { dayNumberToDate, localDayNumber, offsetSegments, offsetSql } from "@/lib/time/tz";
import { appScope, tablesOf, type ChContext } from "../context";
import { callConditions, fromSignedCalls, HAS_RECORDING, START, timeConditions } from "../conditions";
import { bucketSumsSql } from "./bucket-sums";
import { callSumsSql, mayHoldWholeMonth, wholeMonths } from "./call-sums";
import { monthlyParticipants, participantConditions, participantSumsSql } from "./participant-sums";
import { minutes } from "./shared";
import { participantsCsvBytes, participantsCsvSelect } from "./participants-csv";

/** The participants, apps and daily reports. */

/**
 * Every signed participant row of the matching calls (state and cancel rows alike): what
 * every participants figure sums. Per (app, uid), `sum(sign × first_of_uid)` is the number
 * of live calls listing the uid (each call state has one first row per uid; a cancelled
 * state's and its cancel row's add up to nothing), so `HAVING calls > 0` keeps exactly the
 * participants the live states name, with no lookup of the cancel rows; the same with
 * `first_joined_of_uid` / `first_unanswered_of_uid` gives the distinct calls joined / left
 * unanswered. `uidCodes`: only these participants (one page's).
 */
function fromSignedParticipants(ctx: ChContext, f: Filters, pks: readonly number[], options: { person?: boolean; uidCodes?: readonly string[]; within?: Sql[] } = {}): Sql {
  const t = tablesOf(ctx.ch);
  if (pks.length === 0 || options.uidCodes?.length === 0) return sql`FROM ${t.participants} WHERE 0`;
  const uids = options.uidCodes ? [raw(`uid_code IN (${options.uidCodes.join(", ")})`)] : [];
  return sql`FROM ${t.participants} WHERE ${and([...participantConditions(ctx, f, pks, options), ...uids, ...(options.within ?? [])])}`;
}

/** Live calls of a participant among signed rows: the aggregate HAVING tests. */
const LIVE_CALLS = "sum(sign * first_of_uid)";

/** The uids of these apps by code (any shard may hold a code: DISTINCT). */
function uidsOf(ctx: ChContext, pks: readonly number[], uidCodes?: readonly string[]): Sql {
  const codes = uidCodes ? sql` AND uid_code IN (${raw(uidCodes.length ? uidCodes.join(", ") : "0")})` : raw("");
  return sql`(SELECT DISTINCT app_pk AS appPk, uid_code, uid FROM ${tablesOf(ctx.ch).uids} WHERE app_pk IN ${pks.length ? pks : [0]}${codes})`;
}

/**
 * One UInt64 naming a participant's start second in an app (uid code, app, start): the
 * seconds at which a uid has cancel rows are looked up by it (a set of single integers is
 * built and probed several times faster than one of tuples; two keys collide with the odds
 * of a 64-bit hash collision).
 */
const UID_SECOND_KEY = `(uid_code + app_pk + ${START} * 1000003)`;

/**
 * Per (app, uid) over the matching calls: a uid listed twice in one call is one call (its
 * rows merged: minutes summed, joined / unanswered if any row is), as the in-memory
 * engine counts "distinct calls" — all signed sums (fromSignedParticipants).
 *
 * First / last call: the earliest / latest start of a live call listing the uid. Rows at a
 * second where the uid has no cancel row (on that shard: a state and its cancel rows are on
 * their call's shard) are all live states, so their min / max start is taken as is; the few
 * seconds with cancel rows (re-synced or deleted calls not merged yet) are summed one by
 * one (`at`; -1: every other row), and count if their live calls sum to more than 0. Grouping every row by its second
 * instead cost ~3× the memory and half again the time of the participants CSV at 1M calls.
 * The uids are then joined by code. `uidCodes`: only these participants (one page's).
 * `within`: only the rows these conditions keep (a state and its cancel rows are at the
 * same start: any range of starts keeps both or neither).
 */
export function participantsQuery(ctx: ChContext, f: Filters, pks: readonly number[], uidCodes?: readonly string[], within: Sql[] = []): Sql {
  const t = tablesOf(ctx.ch);
  const narrow = [sql`app_pk IN ${pks.length ? pks : [0]}`, ...timeConditions(f), ...within];
  const cancelled = sql`${raw(UID_SECOND_KEY)} IN (SELECT ${raw(UID_SECOND_KEY)} FROM ${t.participantsLocal} WHERE sign = -1 AND ${and(narrow)})`;
  return sql`SELECT appPk, uid, toString(uid_code) AS uidCode, calls, joined, unanswered, audioX1000, videoX1000, totalX1000, firstCallAt, lastCallAt FROM (
      SELECT app_pk AS appPk, uid_code, sum(n_calls) AS calls, sum(n_joined) AS joined, sum(n_unanswered) AS unanswered,
        sum(s_audio) AS audioX1000, sum(s_video) AS videoX1000, sum(s_total) AS totalX1000,
        minIf(if(at = -1, first_s, at), at = -1 OR n_calls > 0) AS firstCallAt, maxIf(if(at = -1, last_s, at), at = -1 OR n_calls > 0) AS lastCallAt
      FROM (
        SELECT app_pk, uid_code, if(${cancelled}, ${raw(START)}, -1) AS at, ${raw(LIVE_CALLS)} AS n_calls,
          sum(sign * first_joined_of_uid) AS n_joined, sum(sign * first_unanswered_of_uid) AS n_unanswered,
          sum(sign * total_audio_minutes_x1000) AS s_audio, sum(sign * total_video_minutes_x1000) AS s_video, sum(sign * total_duration_minutes_x1000) AS s_total,
          min(${raw(START)}) AS first_s, max(${raw(START)}) AS last_s
        ${fromSignedParticipants(ctx, f, pks, { person: true, uidCodes, within })} GROUP BY app_pk, uid_code, at
      ) GROUP BY app_pk, uid_code HAVING calls > 0
    ) AS p ALL INNER JOIN ${uidsOf(ctx, pks, uidCodes)} AS u USING (appPk, uid_code)`;
}

/**
 * One page's participants in the report's order, from signed sums alone (calls, total
 * minutes: the sort keys), with their uids: the page is chosen without the per-call
 * distinct counts, which are then read for its few uids only (participantsQuery).
 */
function participantPageKeysQuery(ctx: ChContext, f: Filters, pks: readonly number[], offset: number, limit: number): Sql {
  return sql`SELECT appPk, uid, toString(uid_code) AS uidCode FROM (
      SELECT app_pk AS appPk, uid_code, sum(c) AS calls, sum(tx) AS totalX1000
      FROM (${participantSumsSql(ctx, f, pks, { person: true })}) GROUP BY app_pk, uid_code HAVING calls > 0
    ) AS p ALL INNER JOIN ${uidsOf(ctx, pks)} AS u USING (appPk, uid_code) ${participantsOrder(f)} LIMIT ${offset}, ${limit}`;
}

/** How many participants (app × uid) the matching calls list. */
function participantsCountQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT count() AS n FROM (SELECT app_pk, uid_code FROM (${participantSumsSql(ctx, f, pks, { person: true })}) GROUP BY app_pk, uid_code HAVING sum(c) > 0)`;
}

/** How many distinct uids (across apps) the matching calls list (a uid's code is the same in every app). */
export function uidCountQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT count() AS n FROM (SELECT uid_code FROM (${participantSumsSql(ctx, f, pks, { person: true })}) GROUP BY uid_code HAVING sum(c) > 0)`;
}

/** Per (app, uid): the number of distinct matching calls listing it (the engagement report's input). */
export function callsPerParticipantQuery(ctx: ChContext, f: Filters, pks: readonly number[]): Sql {
  return sql`SELECT app_pk, uid_code, sum(c) AS calls FROM (${participantSumsSql(ctx, f, pks)}) GROUP BY app_pk, uid_code HAVING calls > 0`;
}

/** The uid codes of one page of participants across apps, in the combined report's order (participants-combined.ts). */
export function combinedPageCodesQuery(ctx: ChContext, f: Filters, pks: readonly number[], offset: number, limit: number): Sql {
  return sql`SELECT toString(uid_code) AS uidCode FROM (
      SELECT uid_code, sum(c) AS calls, sum(tx) AS totalX1000
      FROM (${participantSumsSql(ctx, f, pks, { person: true })}) GROUP BY uid_code HAVING calls > 0
    ) AS p ALL INNER JOIN (SELECT DISTINCT uid_code, uid FROM ${tablesOf(ctx.ch).uids} WHERE app_pk IN ${pks.length ? pks : [0]}) AS u USING (uid_code)
    ${participantsOrder(f, ["uid"])} LIMIT ${offset}, ${limit}`;
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

/**
 * Every figure of one page's participants (`uidCodes`). When a monthly pre-aggregate answers
 * the filters (participant-sums.ts monthlyParticipants), the sums come from it for the whole
 * months and from the rows for the edges; first / last call, a min / max no signed sum
 * keeps, from the rows of the range's edges and of each page participant's first and last
 * whole month with live calls (a month's pre-aggregated calls are its live calls listing
 * the uid, a cancel row being in its state's month) — and of those months, first only a
 * day at either end (firstLastCalls). Else participantsQuery over every row of the range.
 */
async function participantPageRows(ctx: ChContext, f: Filters, pks: readonly number[], uidCodes: readonly string[], signal?: AbortSignal): Promise<ParticipantRaw[]> {
  const monthly = monthlyParticipants(ctx, f);
  if (!monthly || !mayHoldWholeMonth(f.from, f.to)) return ctx.ch.rows<ParticipantRaw>(participantsQuery(ctx, f, pks, uidCodes).text, signal);
  const m = wholeMonths(f.from, f.to);
  const inMonths = [m.first && `month >= ${m.first}`, m.end && `month < ${m.end}`].filter((x): x is string => !!x).map((x) => raw(x));
  const codes = raw(`uid_code IN (${uidCodes.join(", ")})`);
  const [ends, sums] = await Promise.all([
    // Per page participant: its first and last whole month with live calls.
    ctx.ch.rows<MonthEnds>(
      sql`SELECT app_pk AS appPk, toString(uid_code) AS uidCode, toString(min(month)) AS first, toString(max(month)) AS last
          FROM (
            SELECT app_pk, uid_code, month FROM ${monthly.table} WHERE ${and([sql`app_pk IN ${pks}`, ...monthly.conditions, codes, ...inMonths])}
            GROUP BY app_pk, uid_code, month HAVING sum(calls) > 0
          ) GROUP BY app_pk, uid_code`.text,
      signal,
    ),
    ctx.ch.rows<Omit<ParticipantRaw, "uid" | "firstCallAt" | "lastCallAt"> & { uidCode: string }>(
      sql`SELECT app_pk AS appPk, toString(uid_code) AS uidCode, sum(c) AS calls, sum(j) AS joined, sum(u) AS unanswered, sum(ax) AS audioX1000, sum(vx) AS videoX1000, sum(tx) AS totalX1000
        FROM (${participantSumsSql(ctx, f, pks, { person: true, uidCodes })}) GROUP BY app_pk, uid_code HAVING calls > 0`.text,
      signal,
    ),
  ]);
  const firstLast = await firstLastCalls(ctx, f, pks, uidCodes, m, ends, signal);
  return sums.flatMap((s) => {
    const b = firstLast.get(`${s.appPk}\u0000${s.uidCode}`);
    return b ? [{ ...s, uid: b.uid, firstCallAt: b.firstCallAt, lastCallAt: b.lastCallAt }] : [];
  });
}

/** A page participant's first and last whole month with live calls (monthly pre-aggregate). */
interface MonthEnds {
  appPk: number;
  uidCode: string;
  first: string;
  last: string;
}

/** How much of a first (last) month is read first: a day from its first (to its last) matching call. */
const EDGE_DAY_S = 86_400;

/**
 * First / last call of the page participants (by app and uid code), read from the rows of
 * the range's edges (outside the whole months `m`) and of each participant's first and last
 * whole month (`ends`). Of those months, only a day is read first: from the month's first
 * 15-minute bucket with a live matching call (calls_by_bucket, same filters: no
 * participant's call can be earlier in that month), and up to its last. A participant's
 * earliest live call found is then the earliest of all when it lies in that day (no whole
 * month before holds a live call of theirs, and the edges are read whole), and the same
 * for the last. At a busy participant's density (hundreds of calls a month at 10M) that
 * answers almost everyone from a fifteenth of those months' rows; the others — and
 * participants with no call in those days — are read again over their whole first and last months.
 */
async function firstLastCalls(ctx: ChContext, f: Filters, pks: readonly number[], uidCodes: readonly string[], m: ReturnType<typeof wholeMonths>, ends: readonly MonthEnds[], signal?: AbortSignal): Promise<Map<string, ParticipantRaw & { uidCode: string }>> {
  const t = tablesOf(ctx.ch);
  const key = (r: { appPk: number; uidCode: string }) => `${r.appPk}\u0000${r.uidCode}`;
  const monthRange = (month: string) => sql`(start_at >= toDateTime(toDate(${month})) AND start_at < toDateTime(addMonths(toDate(${month}), 1)))`;
  // The rows outside the whole months (the edges): bounds the key can use.
  const edges = [m.first && `start_at < toDateTime(${m.first})`, m.end && `start_at >= toDateTime(${m.end})`].filter((x): x is string => !!x).map((x) => raw(x));
  const read = async (codes: readonly string[], within: Sql[]) =>
    within.length === 0 ? [] : ctx.ch.rows<ParticipantRaw & { uidCode: string }>(participantsQuery(ctx, f, pks, codes, [sql`(${join(within, " OR ")})`]).text, signal);
  const months = [...new Set(ends.flatMap((e) => [e.first, e.last]))];
  // Per month named: its first and last 15-minute bucket with a live matching call (bucket start; the last's end).
  const spans = new Map<string, { lo: number; hi: number }>();
  if (months.length > 0) {
    const inMonths = join(months.map((month) => sql`(bucket >= toDateTime(toDate(${month})) AND bucket < toDateTime(addMonths(toDate(${month}), 1)))`), " OR ");
    const rows = await ctx.ch.rows<{ month: string; lo: number; hi: number }>(
      sql`SELECT toString(toStartOfMonth(bucket)) AS month, toUInt32(min(bucket)) AS lo, toUInt32(max(bucket)) + 900 AS hi FROM (
          SELECT bucket FROM ${t.callsByBucket} WHERE ${and([...callConditions(t, f, pks, { ignoreTime: true }), sql`(${inMonths})`])} GROUP BY bucket HAVING sum(calls) > 0
        ) GROUP BY month`.text,
      signal,
    );
    for (const r of rows) spans.set(r.month, { lo: Number(r.lo), hi: Number(r.hi) });
  }
  const days = [...edges];
  for (const month of new Set(ends.map((e) => e.first))) {
    const span = spans.get(month);
    if (span) days.push(sql`(start_at >= toDateTime(${span.lo}) AND start_at < toDateTime(${span.lo + EDGE_DAY_S}))`);
  }
  for (const month of new Set(ends.map((e) => e.last))) {
    const span = spans.get(month);
    if (span) days.push(sql`(start_at >= toDateTime(${span.hi - EDGE_DAY_S}) AND start_at < toDateTime(${span.hi}))`);
  }
  const out = new Map((await read(uidCodes, days)).map((r) => [key(r), r]));
  // Who those days did not answer: no call there, or a first call after the first day (a last before the last day). (Number: a 64-bit integer may come as a string.)
  const again = ends.filter((e) => {
    const r = out.get(key(e));
    const first = spans.get(e.first);
    const last = spans.get(e.last);
    return !r || !first || !last || Number(r.firstCallAt) >= first.lo + EDGE_DAY_S || Number(r.lastCallAt) < last.hi - EDGE_DAY_S;
  });
  if (again.length > 0) {
    const whole = [...edges, ...[...new Set(again.flatMap((e) => [e.first, e.last]))].map(monthRange)];
    for (const r of await read([...new Set(again.map((e) => e.uidCode))], whole)) if (again.some((e) => key(e) === key(r))) out.set(key(r), r);
  }
  return out;
}

/**
 * One page of the participants report, in its order, with the total number of
 * participants: the page's participants chosen from signed sums, then their full rows.
 */
export async function getParticipantsPage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<ParticipantUsageRow>> {
  const apps = appScope(ctx, f, scope);
  const offset = (f.page - 1) * f.perPage;
  const [count, keys] = await Promise.all([
    ctx.ch.rows<{ n: number }>(participantsCountQuery(ctx, f, apps.pks).text, signal),
    ctx.ch.rows<{ appPk: number; uid: string; uidCode: string }>(participantPageKeysQuery(ctx, f, apps.pks, offset, f.perPage).text, signal),
  ]);
  const pagePks = [...new Set(keys.map((k) => k.appPk))];
  const rows = keys.length === 0 ? [] : await participantPageRows(ctx, f, pagePks, [...new Set(keys.map((k) => k.uidCode))], signal);
  const byKey = new Map(rows.map((r) => [`${r.appPk}\u0000${r.uid}`, r]));
  const page = keys.map((k) => byKey.get(`${k.appPk}\u0000${k.uid}`)).filter((r): r is ParticipantRaw => r !== undefined);
  return pageOf(page.map((r) => participantRow(r, apps.appId)), count[0]?.n ?? 0, f);
}

/**
 * Every participant, in the report's order, as the CSV's lines (UTF-8 bytes): read from
 * ClickHouse in RowBinary and written by participants-csv.ts as the client reads.
 */
export function participantsCsvBatches(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<Uint8Array> {
  const apps = appScope(ctx, f, scope);
  const query = sql`${raw(participantsCsvSelect(participantsQuery(ctx, f, apps.pks).text))} ${participantsOrder(f)}`.text;
  return participantsCsvBytes(ctx.ch, query, apps, f.tz, signal);
}

/** Per tenant app the caller may see (each requested app, even with no calls), in app id order. */
export async function getAppUsage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<AppUsageRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const [rows, people] = await Promise.all([
    ctx.ch.rows<{ appPk: number; calls: number; audioX1000: number; videoX1000: number; recordings: number }>(
      sql`SELECT app_pk AS appPk, sum(c) AS calls, sum(ax) AS audioX1000, sum(vx) AS videoX1000, sum(c * ${raw(HAS_RECORDING)}) AS recordings
        FROM (${callSumsSql(t, f, apps.pks)}) GROUP BY app_pk`.text,
      signal,
    ),
    ctx.ch.rows<{ appPk: number; participants: number }>(
      sql`SELECT appPk, count() AS participants FROM (
          SELECT app_pk AS appPk, uid_code FROM (${participantSumsSql(ctx, f, apps.pks)}) GROUP BY app_pk, uid_code HAVING sum(c) > 0
        ) GROUP BY appPk`.text,
      signal,
    ),
  ]);
  const byPk = new Map(rows.map((r) => [r.appPk, r]));
  const participantsOf = new Map(people.map((r) => [r.appPk, r.participants]));
  const wanted = new Set(apps.pks);
  return apps.visible
    .filter((a) => wanted.has(a.pk))
    .map((a) => {
      const r = byPk.get(a.pk);
      const audio = r?.audioX1000 ?? 0;
      const video = r?.videoX1000 ?? 0;
      return {
        app: a.appId, name: a.name, calls: r?.calls ?? 0, audioMinutes: minutes(audio), videoMinutes: minutes(video),
        totalMinutes: minutes(audio + video), recordings: r?.recordings ?? 0, participants: participantsOf.get(a.pk) ?? 0,
      };
    });
}

/** More than a month holds, with a DST hour to spare: the end of the calls of a month starting at some instant. */
const MONTH_SPAN = 32 * 86_400;

/** Longest range the daily report fills with zero days (as the in-memory engine). */
const MAX_DAYS = 366 * 20;

/**
 * Per local day in `tz`, every day from `from` to `to` (or the matching calls' first to
 * last day), days without calls as zeros. A call's day is that of its start with the
 * zone's offset at that instant, from the same offset segments the in-memory engine
 * uses (lib/time/tz.ts: Node's time zone data, so +05:30, +05:45 and DST days agree
 * whatever the server's zone database). Read from the 15-minute pre-aggregate for the
 * buckets lying whole in the range and the signed rows at its edges when the filters allow
 * (bucket-sums.ts: a bucket lies in one local day of any zone), else from the signed rows.
 */
export async function getDailyUsage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<DailyUsageRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  // The zone's offsets over a range holding every matching call's start: [from, to) when
  // given, else the bounds of every month of these apps in the monthly pre-aggregate (months
  // of cancelled rows too: a superset is enough for the offsets). A month starts at the
  // server zone's midnight, so its calls start from it and within 32 days after it. The
  // monthly table has hundreds of rows a year; the 15-minute one read here before has
  // millions at 10M calls (a fifth of the all-time series' time: decision 0034, session 18).
  let segLo = f.from;
  let segHi = f.to;
  if (segLo === undefined || segHi === undefined) {
    const [b] = await ctx.ch.rows<{ n: number; min: number; max: number }>(
      sql`SELECT count() AS n, toInt64(toUInt32(toDateTime(min(month)))) AS min, toInt64(toUInt32(toDateTime(max(month)))) AS max
        FROM ${t.callsByMonth} WHERE app_pk IN ${apps.pks.length ? apps.pks : [0]}`.text,
      signal,
    );
    if (!b || b.n === 0) return [];
    segLo ??= b.min;
    segHi ??= b.max + MONTH_SPAN;
  }
  if (segHi <= segLo) return [];
  const segments = offsetSegments(f.tz, segLo, segHi);
  // Signed sums per day; a day whose calls all cancelled sums to 0 calls and is left out.
  const localDay = (epochSeconds: string) => `toInt64(floor((${epochSeconds} + ${offsetSql(segments, epochSeconds)}) / 86400))`;
  const sums = bucketSumsSql(t, f, apps.pks, localDay);
  const perDay = sums
    ? sql`SELECT group_key AS day, sum(c) AS calls, sum(ax) AS audioX1000, sum(vx) AS videoX1000, sum(ds) AS durS, sum(ps) AS parts
        FROM (${sums}) GROUP BY day HAVING calls != 0`
    : sql`SELECT ${raw(localDay(START))} AS day, sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audioX1000,
        sum(sign * total_video_minutes_x1000) AS videoX1000, sum(sign * duration_seconds) AS durS, sum(sign * total_participants) AS parts
      ${fromSignedCalls(t, f, apps.pks)} GROUP BY day HAVING calls != 0`;
  const rows = await ctx.ch.rows<{ day: number; calls: number; audioX1000: number; videoX1000: number; durS: number; parts: number }>(perDay.text, signal);
  // Without from/to the days run from the first to the last day with a matching call (its local day: every offset is whole quarter hours).
  let first: number;
  let last: number;
  if (f.from !== undefined && f.to !== undefined) {
    if (f.to <= f.from) return [];
    first = localDayNumber(f.tz, f.from);
    last = localDayNumber(f.tz, f.to - 1);
  } else {
    if (rows.length === 0) return [];
    first = f.from !== undefined ? localDayNumber(f.tz, f.from) : Math.min(...rows.map((r) => r.day));
    last = f.to !== undefined ? localDayNumber(f.tz, f.to - 1) : Math.max(...rows.map((r) => r.day));
  }
  const days = Math.min(last - first + 1, MAX_DAYS);
  if (days <= 0) return [];
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
