import type { Db } from "@/db/client";
import { clickhouse, clickHouseConfigured, type ClickHouse } from "@/lib/clickhouse/client";
import { ensureClickHouseSchema } from "@/lib/clickhouse/ensure";
import { insertRowBinary } from "@/lib/clickhouse/row-binary";
import { deliveryRow, eventCountRow, recordingRow } from "@/lib/clickhouse/rows";
import { CLIENT_SESSIONS, EVENT_COUNTS, RECORDINGS, WEBHOOK_DELIVERIES, type TableSpec } from "@/lib/clickhouse/schema";
import { Forwarder, type DeliveryFact, type EventCountFact, type ForwardTarget, type ForwarderOptions, type RecordingFact } from "./forwarder";

/**
 * The forwarder's writes into the warehouse's ClickHouse tables (lib/clickhouse/schema.ts).
 * Each table is a ReplacingMergeTree keyed by the fact's identity, so a batch written
 * twice leaves one row per fact: deliveries by (app, idempotency key), recordings by
 * (app, session, start), event counts by (app, bucket, trigger) with the count itself as
 * the version (counts only grow), participant sessions by (app, session, occupant, joined)
 * with SQLite's change stamp as the version.
 */
export function clickHouseForwardTarget(ch: ClickHouse): ForwardTarget {
  // The schema is migrated at server start; if ClickHouse was down then, the first write
  // after it is back migrates it (once per process, lib/clickhouse/ensure.ts).
  // RowBinary: delivery bodies go as bytes, with no JSON escaping here or parsing there.
  const insert = async (table: TableSpec, rows: Array<Record<string, unknown>>) => {
    await ensureClickHouseSchema();
    await insertRowBinary(ch, table, rows);
  };
  return {
    writeDeliveries: (rows: DeliveryFact[]) => insert(WEBHOOK_DELIVERIES, rows.map((d) => deliveryRow(d))),
    writeEventCounts: (rows: EventCountFact[]) => insert(EVENT_COUNTS, rows.map(eventCountRow)),
    writeRecordings: (rows: RecordingFact[]) => insert(RECORDINGS, rows.map((r) => recordingRow(r))),
    writeClientSessions: (rows: Array<Record<string, unknown>>) => insert(CLIENT_SESSIONS, rows),
  };
}

/** The server's forwarder when CLICKHOUSE_URL is set (undefined otherwise), already running. */
export function startClickHouseForwarder(db: Db, options?: ForwarderOptions): Forwarder | undefined {
  if (!clickHouseConfigured()) return undefined;
  return new Forwarder(db, clickHouseForwardTarget(clickhouse()), options).start();
}
