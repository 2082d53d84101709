import type pg from "pg";
import { triggerCategory } from "./envelope";
import { bucketOf, type DeliveryFact, type EventCountFact, type ForwardTarget } from "./forwarder";

/**
 * The webhook inbox in Postgres, shared by several Callboard servers (DATABASE_URL;
 * docs/decisions/0035-state-in-postgres.md §6). Not yet wired into the ingest (the
 * gate in db/index.ts refuses DATABASE_URL until the state modules have moved).
 *
 * - **Durable before the 200.** `storeDelivery` returns after Postgres committed the
 *   delivery and its place in the forward queue in one transaction.
 * - **Deduplicated across servers** by the `(app_pk, idem_key)` unique index: a repeat,
 *   whichever server receives it, bumps `repeat_count` and queues nothing.
 * - **Forwarded once, counted once.** `forwardDeliveries` claims queued rows with `FOR
 *   UPDATE SKIP LOCKED`, so two servers forwarding at once take disjoint batches, adds them
 *   to their event counts and dequeues them in the transaction that saw ClickHouse accept
 *   them. A server killed between ClickHouse's
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
  /** The body exactly as received (its `data` gives the event's count bucket when forwarded). */
  body: string;
  receivedMs: number;
}

export interface StoredDelivery {
  pk: number;
  /** True when an earlier delivery had the same key: answered 200, counted once. */
  repeat: boolean;
}

export async function storeDelivery(pool: pg.Pool, d: IncomingDelivery): Promise<StoredDelivery> {
  // One statement, so one round trip and one atomic commit: the delivery and, when it is
  // new (xmax = 0 only on a row this statement inserted), its place in the forward queue.
  // Counted when forwarded, not here: every delivery of an app's 15 minutes would wait for
  // the one before it to commit on the bucket's counter row.
  const stored = await pool.query<{ pk: string; inserted: boolean }>(
    `WITH stored AS (
       INSERT INTO webhook_deliveries AS w (app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, last_received_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (app_pk, idem_key) DO UPDATE SET repeat_count = w.repeat_count + 1, last_received_ms = excluded.received_ms
       RETURNING w.pk, (w.xmax = 0) AS inserted
     ), queued AS (
       INSERT INTO delivery_forward_queue (delivery_pk) SELECT pk FROM stored WHERE inserted
     )
     SELECT pk, inserted FROM stored`,
    [d.appPk, d.idemKey, d.trigger, d.webhook, d.type, d.sessionId, d.outcome, d.body, d.receivedMs],
  );
  const row = stored.rows[0]!;
  return { pk: Number(row.pk), repeat: !row.inserted };
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
    // Each delivery is counted once: in the transaction that takes it off the queue. One
    // statement per batch, in key order (two servers' batches lock counters in the same order).
    const increments = new Map<string, { appPk: number; trigger: string; bucketStart: number; n: number }>();
    for (const r of rows) {
      const key = `${r.appPk}|${r.bucketStart}|${r.trigger}`;
      const entry = increments.get(key) ?? { appPk: r.appPk, trigger: r.trigger, bucketStart: r.bucketStart, n: 0 };
      entry.n += 1;
      increments.set(key, entry);
    }
    const ordered = [...increments.values()].sort((a, b) => a.appPk - b.appPk || a.bucketStart - b.bucketStart || (a.trigger < b.trigger ? -1 : a.trigger > b.trigger ? 1 : 0));
    const counted = await client.query<{ app_pk: string; trigger: string; bucket_start: string; count: string }>(
      `INSERT INTO event_counts AS c (app_pk, trigger, bucket_start, count)
       SELECT t.app_pk, t.trigger, t.bucket_start, t.n FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS t(app_pk, trigger, bucket_start, n, ord)
       ORDER BY ord
       ON CONFLICT (app_pk, bucket_start, trigger) DO UPDATE SET count = c.count + excluded.count
       RETURNING c.app_pk, c.trigger, c.bucket_start, c.count`,
      [ordered.map((c) => c.appPk), ordered.map((c) => c.trigger), ordered.map((c) => c.bucketStart), ordered.map((c) => c.n)],
    );
    // Absolute values, as the SQLite forwarder sends them: a re-sent batch writes the same or a larger count, never a sum.
    const touched: EventCountFact[] = counted.rows.map((c) => ({ appPk: Number(c.app_pk), trigger: c.trigger, bucketStart: Number(c.bucket_start), count: Number(c.count) }));
    await target.writeDeliveries(rows);
    if (touched.length > 0) await target.writeEventCounts(touched);
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
