import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import type { Tables } from "./context";

/**
 * The filter model compiled to ClickHouse conditions over the current version of each
 * call (`FROM calls FINAL`: the highest version of every (app_pk, session_id), conditions
 * applied after the versions collapse). Every value goes through the encoder (`sql`).
 * The same meaning as the in-memory engine's filters: `from`/`to` on start_at (from
 * inclusive, to exclusive), enumerations by exact value, `uid`: the call lists the uid,
 * `hasRecording`: the platform's flag or a recording webhook for the session.
 */

export interface ConditionOptions {
  /** Leave out from/to (the heatmap's window is not a start filter). */
  ignoreTime?: boolean;
}

/** 1 when the call has a recording: the platform's flag, or a recording webhook (co-sharded: evaluated shard by shard). */
export function hasRecordingSql(t: Tables, pks: readonly number[]): Sql {
  if (pks.length === 0) return raw("platform_has_recording");
  return sql`(platform_has_recording = 1 OR (app_pk, session_id) IN (SELECT app_pk, session_id FROM ${t.recordingsLocal} FINAL WHERE deleted = 0 AND app_pk IN ${pks}))`;
}

/** Every condition of `f` on calls of the apps `pks` (the viewer's isolation: always the first condition). */
export function callConditions(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}): Sql[] {
  if (pks.length === 0) return [raw("0")];
  const out: Sql[] = [sql`app_pk IN ${pks}`, raw("deleted = 0")];
  if (!opts.ignoreTime && f.from !== undefined) out.push(sql`start_at >= ${f.from}`);
  if (!opts.ignoreTime && f.to !== undefined) out.push(sql`start_at < ${f.to}`);
  if (f.type !== undefined) out.push(sql`type = ${f.type}`);
  if (f.mode !== undefined) out.push(sql`mode = ${f.mode}`);
  if (f.status !== undefined) out.push(sql`status = ${f.status}`);
  if (f.receiverType !== undefined) out.push(sql`receiver_type = ${f.receiverType}`);
  if (f.hasRecording !== undefined) out.push(sql`${hasRecordingSql(t, pks)} = ${f.hasRecording}`);
  if (f.participantsCount !== undefined) out.push(sql`total_participants = ${f.participantsCount}`);
  if (f.uid !== undefined) out.push(sql`has(p_uid, ${f.uid})`);
  return out;
}

/** `FROM <calls> FINAL WHERE <conditions>`: the matching calls, one row each. */
export function fromCalls(t: Tables, f: Filters, pks: readonly number[], opts: ConditionOptions = {}, table: Sql = t.calls): Sql {
  return sql`FROM ${table} FINAL WHERE ${and(callConditions(t, f, pks, opts))}`;
}
