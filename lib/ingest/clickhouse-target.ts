import type { Db } from "@/db/client";
import { clickhouse, clickHouseConfigured, type ClickHouse } from "@/lib/clickhouse/client";
import { ensureClickHouseSchema } from "@/lib/clickhouse/ensure";
import { insertRowBinary } from "@/lib/clickhouse/row-binary";
import { deliveryRow, eventCountRow, recordingRow } from "@/lib/clickhouse/rows";
import { CLIENT_SESSIONS, EVENT_COUNTS, RECORDINGS, WEBHOOK_DELIVERIES, type TableSpec } from "@/lib/clickhouse/schema";
import { flagLinkedCalls } from "@/lib/clickhouse/link-flags";
import { processWriterV2, type CallWriterV2 } from "@/lib/clickhouse/writer-v2";
import { newOwnerId } from "@/lib/locks/sync-lock";
import { releaseSyncLease, takeSyncLease } from "@/lib/locks/sync-lease";
import { ForwardDeferred, Forwarder, type DeliveryFact, type EventCountFact, type ForwardTarget, type ForwarderOptions, type RecordingFact } from "./forwarder";

/**
 * What the forwarder needs to flag the calls its recording links belong to
 * (calls_v2.has_link; lib/clickhouse/link-flags.ts): Callboard's state (the apps' sync
 * leases) and schema v2's writer.
 */
export interface LinkFlagging {
  db: Db;
  writer: () => Promise<CallWriterV2>;
  /** How long the lease is taken for (default 60 s: a pass over one batch's calls takes well under it). */
  leaseMs?: number;
}

/**
 * Flags the calls of a batch of links, app by app, each under the app's sync lease
 * (decision 0034: one writer per app at a time). A lease held by a sync is not waited
 * for: the batch is deferred (ForwardDeferred), stays in the backlog and is tried again
 * after a pause — its recordings are written again (they collapse) and the flags of the
 * calls the sync did not flag itself are written then. An app with its lease taken is
 * flagged before the next, so a batch deferred half way redoes only what is left (the
 * pass skips calls already flagged).
 */
async function flagCallsOfLinks(ch: ClickHouse, links: LinkFlagging, rows: readonly RecordingFact[]): Promise<void> {
  const byApp = new Map<number, Set<string>>();
  for (const r of rows) byApp.set(r.appPk, (byApp.get(r.appPk) ?? new Set()).add(r.sessionId));
  const writer = await links.writer();
  for (const [appPk, sessions] of byApp) {
    const owner = newOwnerId();
    const lease = await takeSyncLease(links.db, appPk, owner, links.leaseMs ?? 60_000);
    if (!lease.acquired) throw new ForwardDeferred(`the link flags of app ${appPk} wait for its sync to finish (its lease is held)`);
    try {
      await flagLinkedCalls(writer, ch, appPk, [...sessions]);
    } finally {
      await releaseSyncLease(links.db, appPk, owner);
    }
  }
}

/**
 * The forwarder's writes into the warehouse's ClickHouse tables (lib/clickhouse/schema.ts).
 * Each table is a ReplacingMergeTree keyed by the fact's identity, so a batch written
 * twice leaves one row per fact: deliveries by (app, idempotency key), recordings by
 * (app, session, start), event counts by (app, bucket, trigger) with the count itself as
 * the version (counts only grow), participant sessions by (app, session, occupant, joined)
 * with SQLite's change stamp as the version. With `links`, the calls of the recording links
 * written get their link flag (calls_v2.has_link) under their app's sync lease.
 */
export function clickHouseForwardTarget(ch: ClickHouse, links?: LinkFlagging): ForwardTarget {
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
    // The links first, then their calls' flags: a sync that writes one of these calls after the links are in flags it itself.
    writeRecordings: async (rows: RecordingFact[]) => {
      await insert(RECORDINGS, rows.map((r) => recordingRow(r)));
      if (links) await flagCallsOfLinks(ch, links, rows);
    },
    writeClientSessions: (rows: Array<Record<string, unknown>>) => insert(CLIENT_SESSIONS, rows),
  };
}

/** The server's forwarder when CLICKHOUSE_URL is set (undefined otherwise), already running. */
export function startClickHouseForwarder(db: Db, options?: ForwarderOptions): Forwarder | undefined {
  if (!clickHouseConfigured()) return undefined;
  return new Forwarder(db, clickHouseForwardTarget(clickhouse(), { db, writer: processWriterV2 }), options).start();
}
