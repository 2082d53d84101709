import type { Db } from "@/db/client";
import { env } from "@/lib/config/env";
import { getEventCounts, type EventCount, type EventCountsParams } from "@/lib/ingest/queries";
import { engineKind } from "./engine";
import { clickHouseEventCounts } from "./engines/clickhouse";

/**
 * The events report (webhook deliveries per app, trigger and local day) from where this
 * process keeps its facts: ClickHouse when CLICKHOUSE_URL is set (the counts every
 * Callboard server forwarded there), else the SQLite warehouse. Outside the table of
 * reports (REPORT_CSV_WRITERS): its rows are the ingest's, not the calls'.
 */
export async function eventCounts(db: Db, appPks: number[], params: EventCountsParams, signal?: AbortSignal): Promise<EventCount[]> {
  return engineKind(env()) === "clickhouse" ? clickHouseEventCounts(db, appPks, params, signal) : getEventCounts(db, appPks, params);
}
