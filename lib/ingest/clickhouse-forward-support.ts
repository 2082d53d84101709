/**
 * Test support for the ClickHouse forwarding suites: a varied stream of deliveries (chat,
 * recordings, live call events, repeats) and the comparison of what SQLite stored with
 * what ClickHouse holds, read the way reports read it (one row per fact).
 */
import type { Db } from "@/db/client";
import type { ClickHouse } from "@/lib/clickhouse/client";
import { connectionChanged, messageSent, participantJoined, reactionAdded, recordingGenerated, sessionStarted, type Delivery } from "./test-deliveries";

/** `n` distinct deliveries for `appId` (events spread over a few days of 15-minute buckets). */
export function deliveryMix(appId: string, n: number, tag = "d"): Delivery[] {
  const init = { appId };
  const t0 = 1_760_000_000;
  const out: Delivery[] = [];
  for (let i = 0; i < n; i++) {
    const t = t0 + i * 97;
    switch (i % 6) {
      case 0:
      case 1:
        out.push(messageSent(init, `${tag}-m-${i}`, t));
        break;
      case 2:
        out.push(reactionAdded(init, `${tag}-r-${i}`, t));
        break;
      case 3:
        out.push(recordingGenerated(init, `${tag}-s-${i}`, t));
        break;
      case 4:
        out.push(connectionChanged(init, `${tag}-u${i}`, t * 1000));
        break;
      default:
        out.push(i % 12 === 5 ? sessionStarted(init, `${tag}-live-${i}`, t) : participantJoined(init, `${tag}-live-${i}`, { name: `P${i}`, joined_at: t }));
    }
  }
  return out;
}

export interface FactCounts {
  deliveries: number;
  /** Sum of every event-count bucket. */
  counted: number;
  buckets: number;
  recordings: number;
  /** Participant sessions (client_sessions). */
  clientSessions: number;
}

export function sqliteFacts(db: Db): FactCounts {
  const one = (q: string) => Number(db.$client.prepare(q).pluck().get() ?? 0);
  return {
    deliveries: one("SELECT count(*) FROM webhook_deliveries"),
    counted: one("SELECT coalesce(sum(count), 0) FROM event_counts"),
    buckets: one("SELECT count(*) FROM event_counts"),
    recordings: one("SELECT count(*) FROM recordings"),
    clientSessions: one("SELECT count(*) FROM client_sessions"),
  };
}

/** ClickHouse's facts, one per identity (as FINAL / argMax would read them). */
export async function clickHouseFacts(ch: ClickHouse): Promise<FactCounts> {
  const one = async (q: string) => Number((await ch.rows<{ n: number }>(q))[0]?.n ?? 0);
  return {
    deliveries: await one("SELECT count() AS n FROM (SELECT app_pk, idem_key FROM webhook_deliveries GROUP BY app_pk, idem_key)"),
    counted: await one("SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM event_counts GROUP BY app_pk, bucket_start, trigger)"),
    buckets: await one("SELECT count() AS n FROM (SELECT 1 FROM event_counts GROUP BY app_pk, bucket_start, trigger)"),
    recordings: await one("SELECT count() AS n FROM (SELECT 1 FROM recordings GROUP BY app_pk, session_id, start_key)"),
    clientSessions: await one("SELECT count() AS n FROM (SELECT 1 FROM client_sessions GROUP BY app_pk, session_id, occupant, joined_key)"),
  };
}

/** The (app, idempotency key) pairs SQLite holds that ClickHouse lacks. */
export async function missingInClickHouse(db: Db, ch: ClickHouse): Promise<string[]> {
  const local = db.$client.prepare("SELECT app_pk || '|' || idem_key FROM webhook_deliveries").pluck().all() as string[];
  const remote = new Set((await ch.rows<{ k: string }>("SELECT DISTINCT concat(toString(app_pk), '|', idem_key) AS k FROM webhook_deliveries")).map((r) => r.k));
  return local.filter((k) => !remote.has(k));
}
