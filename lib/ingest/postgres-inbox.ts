import type pg from "pg";
import { countBucket, triggerCategory } from "./envelope";
import { bucketOf, type DeliveryFact, type EventCountFact, type ForwardTarget } from "./forwarder";

/**
 * The webhook inbox in Postgres, shared by several Callboard servers (DATABASE_URL;
 * docs/decisions/0030-state-in-postgres.md §6). Not yet wired into the ingest (the
 * gate in db/index.ts refuses DATABASE_URL until the state modules have moved).
 *
 * - **Durable before the 200.** `storeDelivery` returns after Postgres committed the
 *   delivery, its event count and its place in the forward queue in one transaction.
 * - **Deduplicated across servers** by the `(app_pk, idem_key)` unique index: a repeat,
 *   whichever server receives it, bumps `repeat_count` and queues nothing.
 * - **Forwarded once.** `forwardDeliveries` claims queued rows with `FOR UPDATE SKIP
 *   LOCKED`, so two servers forwarding at once take disjoint batches, and dequeues them in
 *   the transaction that saw ClickHouse accept them. A server killed between ClickHouse's
 *   answer and its commit leaves the batch queued: it is sent again, and ClickHouse's
 *   ReplacingMergeTree keys (app, idempotency key) collapse the copy (decision 0015 §3).
 */

export interface IncomingDelivery {
  appPk: number;
  idemKey: string;
  trigger: string;
  webhook: string;
  type: string | null;
  sessionId: string | null;
  outcome: "applied" | "stored" | "failed";
  /** The body exactly as received. */
  body: string;
  /** The envelope's `data`, for the event's count bucket. */
  data: Record<string, unknown>;
  receivedMs: number;
}

export interface StoredDelivery {
  pk: number;
  /** True when an earlier delivery had the same key: answered 200, counted once. */
  repeat: boolean;
}

export async function storeDelivery(pool: pg.Pool, d: IncomingDelivery): Promise<StoredDelivery> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // xmax = 0 only on a row this statement inserted (an ON CONFLICT update sets it).
    const stored = await client.query<{ pk: string; inserted: boolean }>(
      `INSERT INTO webhook_deliveries AS w (app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, last_received_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (app_pk, idem_key) DO UPDATE SET repeat_count = w.repeat_count + 1, last_received_ms = excluded.received_ms
       RETURNING w.pk, (w.xmax = 0) AS inserted`,
      [d.appPk, d.idemKey, d.trigger, d.webhook, d.type, d.sessionId, d.outcome, d.body, d.receivedMs],
    );
    const row = stored.rows[0]!;
    if (row.inserted) {
      await client.query(
        `INSERT INTO event_counts AS c (app_pk, trigger, bucket_start, count) VALUES ($1, $2, $3, 1)
         ON CONFLICT (app_pk, bucket_start, trigger) DO UPDATE SET count = c.count + 1`,
        [d.appPk, d.trigger, countBucket(d.trigger, d.data, d.receivedMs)],
      );
      await client.query("INSERT INTO delivery_forward_queue (delivery_pk) VALUES ($1)", [row.pk]);
    }
    await client.query("COMMIT");
    return { pk: Number(row.pk), repeat: !row.inserted };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

interface QueuedDeliveryRow {
  pk: string;
  app_pk: string;
  idem_key: string;
  trigger: string;
  webhook: string;
  type: string | null;
  session_id: string | null;
  outcome: string;
  body: string;
  received_ms: string;
  repeat_count: string;
  last_received_ms: string;
}

/**
 * Claims up to `batchRows` queued deliveries no other server holds, writes them (and the
 * event counts they touched, as absolute values) to `target`, and dequeues them once the
 * target accepted them. Returns how many were forwarded (0: nothing this server could
 * take). A target that throws leaves the batch queued for the next attempt, here or on
 * another server.
 */
export async function forwardDeliveries(pool: pg.Pool, target: ForwardTarget, options: { batchRows?: number } = {}): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const claimed = await client.query<QueuedDeliveryRow>(
      `SELECT d.pk, d.app_pk, d.idem_key, d.trigger, d.webhook, d.type, d.session_id, d.outcome, d.body,
              d.received_ms, d.repeat_count, d.last_received_ms
       FROM delivery_forward_queue q JOIN webhook_deliveries d ON d.pk = q.delivery_pk
       ORDER BY q.delivery_pk LIMIT $1 FOR UPDATE OF q SKIP LOCKED`,
      [options.batchRows ?? 2_000],
    );
    if (claimed.rows.length === 0) {
      await client.query("COMMIT");
      return 0;
    }
    const rows: DeliveryFact[] = claimed.rows.map((r) => ({
      pk: Number(r.pk), appPk: Number(r.app_pk), idemKey: r.idem_key, trigger: r.trigger, category: triggerCategory(r.trigger),
      webhook: r.webhook, type: r.type, sessionId: r.session_id, outcome: r.outcome, body: r.body,
      receivedMs: Number(r.received_ms), bucketStart: bucketOf(r.trigger, r.body, Number(r.received_ms)),
      repeatCount: Number(r.repeat_count), lastReceivedMs: Number(r.last_received_ms),
    }));
    const counts = await client.query<{ app_pk: string; trigger: string; bucket_start: string; count: string }>(
      `SELECT c.app_pk, c.trigger, c.bucket_start, c.count FROM event_counts c
       JOIN unnest($1::bigint[], $2::text[], $3::bigint[]) AS t(app_pk, trigger, bucket_start)
         ON c.app_pk = t.app_pk AND c.trigger = t.trigger AND c.bucket_start = t.bucket_start`,
      [rows.map((r) => r.appPk), rows.map((r) => r.trigger), rows.map((r) => r.bucketStart)],
    );
    const touched = new Map<string, EventCountFact>();
    for (const c of counts.rows) {
      const fact = { appPk: Number(c.app_pk), trigger: c.trigger, bucketStart: Number(c.bucket_start), count: Number(c.count) };
      touched.set(`${fact.appPk}|${fact.bucketStart}|${fact.trigger}`, fact);
    }
    await target.writeDeliveries(rows);
    if (touched.size > 0) await target.writeEventCounts([...touched.values()]);
    await client.query("DELETE FROM delivery_forward_queue WHERE delivery_pk = ANY($1::bigint[])", [rows.map((r) => r.pk)]);
    await client.query("COMMIT");
    return rows.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Deliveries stored and not yet in ClickHouse (health, tests). */
export async function forwardBacklog(pool: pg.Pool): Promise<number> {
  const r = await pool.query<{ n: string }>("SELECT count(*) AS n FROM delivery_forward_queue");
  return Number(r.rows[0]!.n);
}
