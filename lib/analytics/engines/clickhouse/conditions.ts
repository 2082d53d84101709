import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import { decodeClosed, encodeClosed, SESSION_CODE_SQL, UID_CODE_SQL, type ClosedSet } from "@/lib/clickhouse/schema-v2";
import type { Filters } from "@/lib/analytics/filters";
import { CLICKHOUSE_DIALECT, hasRunningHours, runningHoursOf, runningHoursSql, startBoundsOf } from "@/lib/analytics/running-hours";
import type { Tables } from "./context";

/**
 * The filter model compiled to ClickHouse conditions over schema v2's signed call rows
 * (`calls_v2`: a state +1, its cancel row −1 with the same version and values; decision
 * 0034). A condition holds for a cancel row exactly when it holds for the state it
 * cancels, so conditions apply row by row and never need the versions collapsed:
 *   - sums read every matching row: `sum(sign)` counts calls, `sum(sign × x)` totals x;
 *   - lists read the live rows (`liveSql`): the +1 rows whose (call, version) has no cancel row.
 * Every value goes through the encoder (`sql`). The same meaning as the in-memory engine's
 * filters: `from`/`to` on start_at (from inclusive, to exclusive), enumerations by exact
 * value, `uid`: the call lists the uid, `hasRecording`: the platform's flag or a recording
 * webhook for the session.
 */

export interface ConditionOptions {
  /** Leave out from/to (the heatmap's window is not a start filter). */
  ignoreTime?: boolean;
  /**
   * A further condition on a row's own values (the calls page's prefix of its order: start,
   * duration, …). A cancel row has its state's values, so it narrows the cancel rows a list
   * looks up (liveSql) as well as the rows.
   */
  within?: Sql;
}

/** A call's start as epoch seconds (start_at is a DateTime: JSON would give it as text). */
export const START = "toInt64(toUInt32(start_at))";

/** The largest second a DateTime holds: a bound past it bounds nothing. */
const MAX_DATETIME = 4_294_967_295;

/**
 * from/to on start_at (`column`: a DateTime of the call's start). Given a weekday/hour
 * filter, the wider start bounds of the calls it can keep (running-hours.ts startBoundsOf).
 */
export function timeConditions(filter: Pick<Filters, "from" | "to"> & Partial<Pick<Filters, "weekday" | "hour" | "tz">>, column = "start_at"): Sql[] {
  const f = startBoundsOf(filter);
  const out: Sql[] = [];
  if (f.from !== undefined) out.push(f.from > MAX_DATETIME ? raw("0") : sql`${raw(column)} >= toDateTime(${f.from})`);
  if (f.to !== undefined && f.to <= MAX_DATETIME) out.push(sql`${raw(column)} < toDateTime(${f.to})`);
  return out;
}

/** A closed set's filter: its code, and for a value outside the documented set the text too (an Enum8 refuses unknown names). */
function closedCondition(set: ClosedSet, value: string): Sql {
  const { code, other } = encodeClosed(set, value);
  return code === "other" ? sql`${raw(set)} = 'other' AND ${raw(`${set}_other`)} = ${other}` : sql`${raw(set)} = ${code}`;
}

/**
 * The closed sets as the platform sent them (NULL: unset), under names of their own: a
 * SELECT alias named like its column would stand for the column in WHERE, and the codes
 * are what conditions compare.
 */
export const CLOSED_VALUES = `${decodeClosed("type")} AS callType, ${decodeClosed("mode")} AS callMode, ${decodeClosed("status")} AS callStatus,
  ${decodeClosed("receiver_type")} AS receiverType`;

/** A row with CLOSED_VALUES under the names reports use. */
export function withClosedValues<T extends { callType: string | null; callMode: string | null; callStatus: string | null }>(
  r: T,
): Omit<T, "callType" | "callMode" | "callStatus"> & { type: string | null; mode: string | null; status: string | null } {
  const { callType, callMode, callStatus, ...rest } = r;
  return { ...rest, type: callType, mode: callMode, status: callStatus };
}

/**
 * One UInt64 naming a call of `calls_v2` (its session code plus its app: a set of single
 * integers is built and probed several times faster than one of tuples, and reading the
 * stored code avoids reading the session id); CALL_KEY_OF gives the same from a table that
 * holds the session id. Two calls share a key with the odds of a 64-bit hash collision.
 */
export const CALL_KEY = "(session_code + app_pk)";
export const CALL_KEY_OF = (sessionId: string, appPk: string): string => `(${SESSION_CODE_SQL(sessionId)} + ${appPk})`;

/**
 * One UInt64 naming a state of a call (CALL_KEY and its version), on calls_v2 and on
 * participants_v2 alike (both hold the session code, app and version): for a given call,
 * two versions never share it (1000003 is odd, so multiplying by it is one-to-one modulo 2^64).
 */
export const STATE_KEY = "(session_code + app_pk + version * 1000003)";

/**
 * 1 when the call has a recording: the platform's flag, or a recording webhook's link
 * (`has_link`, stored in the call's state by its writers: lib/clickhouse/link-flags.ts).
 * A column of calls_v2 and of the calls pre-aggregates alike.
 */
export const HAS_RECORDING = "(platform_has_recording = 1 OR has_link = 1)";

/**
 * The live rows among the matching ones: +1 rows not cancelled (by STATE_KEY). The cancel rows are few
 * (re-synced and deleted calls, until merges collapse them), so the set each shard builds
 * is small; they are looked up on the shard's own rows (a call's rows are all on its
 * shard), narrowed to the apps and start range asked (a cancel row has its state's start).
 */
export function liveSql(t: Tables, f: Pick<Filters, "from" | "to">, pks: readonly number[], opts: ConditionOptions = {}): Sql {
  const narrow = [sql`app_pk IN ${pks.length ? pks : [0]}`, ...(opts.ignoreTime ? [] : timeConditions(f)), opts.within];
  return sql`sign = 1 AND ${raw(STATE_KEY)} NOT IN (SELECT ${raw(STATE_KEY)} FROM ${t.callsLocal} WHERE sign = -1 AND ${and(narrow)})`;
}

/**
 * The call states (call, version) that list `uid`: its participant rows summed by sign per
 * state (a cancelled state sums to 0), which name their call by its session code.
 * Co-sharded: looked up on each shard's own rows.
 */
function listsUidSql(t: Tables, f: Filters, uid: string, pks: readonly number[]): Sql {
  return sql`${raw(STATE_KEY)} IN (SELECT ${raw(STATE_KEY)} FROM ${t.participantsLocal}
    WHERE ${and([sql`app_pk IN ${pks}`, sql`uid_code = ${raw(UID_CODE_SQL(sql`${uid}`.text))}`, ...timeConditions(f)])}
    GROUP BY app_pk, session_code, version HAVING sum(sign) > 0)`;
}

/** Every condition of `f` on call rows of the apps `pks` (the viewer's isolation: always the first condition). */
export function callConditions(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}): Sql[] {
  if (pks.length === 0) return [raw("0")];
  const out: Sql[] = [sql`app_pk IN ${pks}`];
  if (!opts.ignoreTime) out.push(...timeConditions(f));
  if (opts.within) out.push(opts.within);
  out.push(...copiedDimensionConditions(f));
  if (f.hasRecording !== undefined) out.push(sql`${raw(HAS_RECORDING)} = ${f.hasRecording}`);
  if (f.uid !== undefined) out.push(listsUidSql(t, f, f.uid, pks));
  out.push(...runningHoursConditions(f));
  return out;
}

/**
 * The conditions on the call dimensions that participant rows carry too (schema-v2.ts
 * PARTICIPANT_CALL_COLUMNS: the closed sets and the participant count, same column names
 * in calls_v2 and participants_v2), so they apply to either table's rows.
 */
export function copiedDimensionConditions(f: Filters): Sql[] {
  const out: Sql[] = [];
  if (f.type !== undefined) out.push(closedCondition("type", f.type));
  if (f.mode !== undefined) out.push(closedCondition("mode", f.mode));
  if (f.status !== undefined) out.push(closedCondition("status", f.status));
  if (f.receiverType !== undefined) out.push(closedCondition("receiver_type", f.receiverType));
  if (f.participantsCount !== undefined) out.push(sql`total_participants = ${f.participantsCount}`);
  return out;
}

/** The weekday/hour filter (running-hours.ts: numbers only, no user text), with or without ignoreTime: its period bounds the hours. */
function runningHoursConditions(f: Filters): Sql[] {
  const hours = runningHoursOf(f);
  return hours === undefined ? [] : [raw(runningHoursSql(hours, START, "ended_at", CLICKHOUSE_DIALECT))];
}

/**
 * Whether `f` filters calls on what participant rows do not carry (their app, start and
 * copiedDimensionConditions' columns they do): hasRecording (a recording link is not in the
 * rows), uid (another participant of the call), the weekday/hour filter (the call's end).
 * Participants then look the matching call states up.
 */
export function needsCallLookup(f: Filters): boolean {
  return f.hasRecording !== undefined || f.uid !== undefined || hasRunningHours(f);
}

/** `FROM <calls> WHERE <conditions>`: every signed row of the matching calls (sum with sign). */
export function fromSignedCalls(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}, table: Sql = t.calls): Sql {
  return sql`FROM ${table} WHERE ${and(callConditions(t, f, pks, opts))}`;
}

/** `FROM <calls> WHERE <conditions> AND live`: the matching calls, one row each (their live state). */
export function fromLiveCalls(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}, table: Sql = t.calls): Sql {
  return sql`FROM ${table} WHERE ${and([...callConditions(t, f, pks, opts), liveSql(t, f, pks, opts)])}`;
}

/** The (app, session) of every matching call on a shard: for IN over a co-sharded table (recordings, client sessions). */
export function matchingCallKeysLocal(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}): Sql {
  return sql`SELECT app_pk, session_id ${fromLiveCalls(t, f, pks, opts, t.callsLocal)}`;
}
