import type { Db } from "@/db/client";
import { clickhouse, qualified, raw, sql, type ClickHouse } from "@/lib/clickhouse";
import { eventCountsByDay, eventCountsFrom, type EventCount, type EventCountsParams } from "@/lib/ingest/queries";
import { listAppRefs } from "@/lib/analytics/scope";
import { unavailableAsHttp } from "../errors";

/**
 * The events report (webhook deliveries per app, trigger and local day) from ClickHouse's
 * `event_counts`: the newest count of each 15-minute bucket (FINAL), summed per day in
 * `tz` exactly as from SQLite (eventCountsByDay). `appPks` are the caller's apps, already
 * resolved; apps removed from the state store (SQLite or Postgres) are never read.
 */
export async function getEventCounts(ch: ClickHouse, db: Db, appPks: number[], params: EventCountsParams, signal?: AbortSignal): Promise<EventCount[]> {
  const ids = new Map((await listAppRefs(db)).map((a) => [a.pk, a.appId]));
  const pks = appPks.filter((p) => ids.has(p));
  if (pks.length === 0 || !(params.to > params.from)) return eventCountsByDay([], params.tz);
  const table = raw(qualified(ch.placement.database, "event_counts"));
  const rows = await ch.rows<{ appPk: number; trigger: string; bucketStart: number; count: number }>(
    sql`SELECT app_pk AS appPk, trigger, bucket_start AS bucketStart, count FROM ${table} FINAL
      WHERE app_pk IN ${pks} AND bucket_start >= ${eventCountsFrom(params)} AND bucket_start < ${params.to}`.text,
    signal,
  );
  return eventCountsByDay(rows.map((r) => ({ ...r, appId: ids.get(r.appPk)! })), params.tz);
}

/** The events report from the process's ClickHouse (CLICKHOUSE_URL); a ClickHouse that cannot be reached is a 503, as for every report. */
export async function clickHouseEventCounts(db: Db, appPks: number[], params: EventCountsParams, signal?: AbortSignal): Promise<EventCount[]> {
  try {
    return await getEventCounts(clickhouse(), db, appPks, params, signal);
  } catch (err) {
    throw unavailableAsHttp(err);
  }
}
