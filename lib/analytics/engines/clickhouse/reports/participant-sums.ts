import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { tablesOf, type ChContext } from "../context";
import { callConditions, copiedDimensionConditions, needsCallLookup, STATE_KEY, timeConditions } from "../conditions";
import { mayHoldWholeMonth, rangeFitsDateTime, wholeMonths } from "./call-sums";

/**
 * The sums every participants figure is made of, per participant row or pre-aggregated
 * month: read from `participants_by_month` for the whole months of the range and from the
 * signed participant rows for the rest, as call-sums.ts does for calls
 * (docs/decisions/0034-clickhouse-schema-v2.md, "Participants from participants_by_month
 * (session 17)"). What the participants count and page choice, the combined report's, the
 * apps report's participant counts and the engagement buckets sum.
 *
 * A subquery with the columns `app_pk`, `uid_code` and the signed sums `c` (live calls
 * listing the uid: `first_of_uid`), `j` / `u` (of them joined / left unanswered:
 * `first_joined_of_uid` / `first_unanswered_of_uid`), `ax`, `vx`, `tx` (audio, video, total
 * minutes × 1000). Group by (app_pk, uid_code) — or uid_code across apps — and keep the
 * groups whose `c` sums to more than 0: exactly the participants of the live calls.
 *
 * participants_by_month answers when the filters are apps, time and the person search only
 * (the dashboard's default); with a filter on type, mode, status or receiver type,
 * participants_by_month_dims (the same sums per the call's closed sets, migration 0012)
 * answers with the same conditions; a filter on participant count, hasRecording, uid or
 * weekday/hour reads the rows alone (monthlyParticipants).
 * Exact in any zone: only months lying whole in the range, by the view's own
 * `toStartOfMonth` on each shard, are read from it (call-sums.ts wholeMonths).
 */

/**
 * The conditions on participant rows (`participants_v2`: signed like the calls, a cancel
 * row per replaced row) of the matching calls: the apps and start range asked, the call
 * dimensions the rows carry (copiedDimensionConditions: type, mode, status, receiver type,
 * participant count), and — when the filters name what they do not (needsCallLookup:
 * hasRecording, uid, weekday/hour) — the call states that match, looked up on the shard's
 * own calls (co-sharded; a cancelled state's rows and their cancel rows both match, and
 * cancel out). `person`: only the uids containing the search (personCondition).
 */
export function participantConditions(ctx: ChContext, f: Filters, pks: readonly number[], options: { person?: boolean }): Sql[] {
  const t = tablesOf(ctx.ch);
  const conds = [sql`app_pk IN ${pks}`, ...timeConditions(f), ...copiedDimensionConditions(f)];
  if (needsCallLookup(f)) {
    conds.push(sql`${raw(STATE_KEY)} IN (SELECT ${raw(STATE_KEY)} FROM ${t.callsLocal} WHERE ${and(callConditions(t, f, pks))} AND sign = 1)`);
  }
  if (options.person) conds.push(...personCondition(ctx, f, pks));
  return conds;
}

/**
 * The participants reports' `person` search (lib/analytics/person.ts: the uid contains the
 * text, ASCII letters without case, as `positionCaseInsensitive` compares) over the uids
 * table: the codes of the matching uids, gathered once from every shard (GLOBAL: a uid's
 * row is on the shard of its code, not of its calls). None without a search.
 */
export function personCondition(ctx: ChContext, f: Filters, pks: readonly number[]): Sql[] {
  if (f.person === undefined || f.person === "") return [];
  const t = tablesOf(ctx.ch);
  return [sql`uid_code GLOBAL IN (SELECT uid_code FROM ${t.uids} WHERE app_pk IN ${pks} AND positionCaseInsensitive(uid, ${f.person}) > 0)`];
}

/** A monthly participants pre-aggregate and the conditions on its rows that keep the matching calls' sums. */
export interface MonthlyParticipants {
  table: Sql;
  conditions: Sql[];
}

/**
 * The monthly pre-aggregate that answers `f`, if one does (a range a DateTime holds, and no
 * filter on what neither keeps: participant count, hasRecording, uid, weekday/hour):
 * participants_by_month without a call dimension in the filters, else
 * participants_by_month_dims with the same closed-set conditions as on the rows (its
 * columns have their names and codes). Participant count is left out of the dims table on
 * purpose: each count would multiply its rows again, for a filter the dashboard rarely sends.
 */
export function monthlyParticipants(ctx: ChContext, f: Filters): MonthlyParticipants | undefined {
  if (needsCallLookup(f) || f.participantsCount !== undefined || !rangeFitsDateTime(f)) return undefined;
  const t = tablesOf(ctx.ch);
  const conditions = copiedDimensionConditions(f);
  return { table: conditions.length === 0 ? t.participantsByMonth : t.participantsByMonthDims, conditions };
}

const ROW_SUMS = `app_pk, uid_code, toInt64(sign * first_of_uid) AS c, toInt64(sign * first_joined_of_uid) AS j, toInt64(sign * first_unanswered_of_uid) AS u,
  toInt64(sign) * total_audio_minutes_x1000 AS ax, toInt64(sign) * total_video_minutes_x1000 AS vx, toInt64(sign) * total_duration_minutes_x1000 AS tx`;

const MONTH_SUMS = `app_pk, uid_code, calls AS c, joined AS j, unanswered AS u,
  total_audio_minutes_x1000 AS ax, total_video_minutes_x1000 AS vx, total_duration_minutes_x1000 AS tx`;

/** The subquery of sums (see above) over the matching participants of `pks`; `uidCodes`: only these participants (one page's). */
export function participantSumsSql(ctx: ChContext, f: Filters, pks: readonly number[], options: { person?: boolean; uidCodes?: readonly string[] } = {}): Sql {
  const t = tablesOf(ctx.ch);
  if (pks.length === 0 || options.uidCodes?.length === 0) return sql`SELECT ${raw(ROW_SUMS)} FROM ${t.participants} WHERE 0`;
  const uids = options.uidCodes ? [raw(`uid_code IN (${options.uidCodes.join(", ")})`)] : [];
  const rows = (extra: Sql[]) => sql`SELECT ${raw(ROW_SUMS)} FROM ${t.participants} WHERE ${and([...participantConditions(ctx, f, pks, options), ...uids, ...extra])}`;
  const monthly = monthlyParticipants(ctx, f);
  if (!monthly || !mayHoldWholeMonth(f.from, f.to)) return rows([]);
  const m = wholeMonths(f.from, f.to);
  const inMonths = [m.first && `month >= ${m.first}`, m.end && `month < ${m.end}`].filter((x): x is string => !!x).map((x) => raw(x));
  const person = options.person ? personCondition(ctx, f, pks) : [];
  const months = sql`SELECT ${raw(MONTH_SUMS)} FROM ${monthly.table} WHERE ${and([sql`app_pk IN ${pks}`, ...monthly.conditions, ...person, ...uids, ...inMonths])}`;
  // The rows outside the whole months: before the first, from the end on (with first ≥ end, every row of the range). Bounds the key can use.
  const outside = [m.first && `start_at < toDateTime(${m.first})`, m.end && `start_at >= toDateTime(${m.end})`].filter((x): x is string => !!x);
  if (outside.length === 0) return months; // all time: the pre-aggregate alone
  return sql`${months} UNION ALL ${rows([raw(`(${outside.join(" OR ")})`)])}`;
}
