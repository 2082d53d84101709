import type pg from "pg";
import type { PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { logger } from "@/lib/log/logger";
import { clientSessionRowOfSqlite } from "@/lib/clickhouse/rows";
import { JOIN_TRIGGERS, LEAVE_TRIGGERS, type ClientSessionChange } from "@/lib/platform/client-session-facts";
import { RECORDING_TRIGGER, triggerCategory, type LiveEvent } from "../platform/webhook-envelope";
import { bucketOf, ForwardDeferred, type DeliveryFact, type EventCountFact, type ForwardTarget, type RecordingFact } from "./forwarder";
import { ingestorOver, type DeliveryStore, type Ingestor } from "./ingest";
import { applyClientSessionChangePg, clientSessionsOfSessions } from "./postgres-client-sessions";
import type { Effect } from "./statements";
import { StoreUnavailableError, type PreparedDelivery, type Rejection, type StoreOutcome } from "./store";
import { inPgTransaction } from "@/lib/postgres/transaction";

/**
 * The webhook inbox in Postgres, shared by several Callboard servers (DATABASE_URL;
 * docs/decisions/0035-state-in-postgres.md §6). `createPostgresIngestor` (below) is the
 * webhook route over it (`getIngestor` chooses it with DATABASE_URL); `PostgresForwarder`
 * (postgres-forwarder.ts) runs `forwardDeliveries` on every server.
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
 * - **Live state and recordings per delivery.** A new delivery's effect (a call's live
 *   state and who is in it; a recording) is applied in the transaction that stores it, so
 *   the live pages show what any server received. The upserts merge in any order (a
 *   status only moves forward, times widen, names fill in), so two servers receiving one
 *   call's events at once converge on the state one server would have; both lock the
 *   session's row first, so they take turns per call and never deadlock.
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
  /** What a new delivery changes besides itself (the ingest's `prepareDelivery`); none when absent. */
  effect?: Effect;
  /** What it changes in `client_sessions` (a join's client, a leave's time); none when absent. */
  clients?: ClientSessionChange | null;
}

export interface StoredDelivery {
  pk: number;
  /** True when an earlier delivery had the same key: answered 200, counted once. */
  repeat: boolean;
}

/** Stores and queues a delivery in one statement: `inserted` is false for a repeat. */
const STORE_AND_QUEUE = `WITH stored AS (
     INSERT INTO webhook_deliveries AS w (app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, last_received_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT (app_pk, idem_key) DO UPDATE SET repeat_count = w.repeat_count + 1, last_received_ms = excluded.received_ms
     RETURNING w.pk, (w.xmax = 0) AS inserted
   ), queued AS (
     INSERT INTO delivery_forward_queue (delivery_pk) SELECT pk FROM stored WHERE inserted
   )
   SELECT pk, inserted FROM stored`;

type Queryable = Pick<pg.Pool, "query">;

async function storeAndQueue(db: Queryable, d: IncomingDelivery): Promise<StoredDelivery> {
  const stored = await db.query<{ pk: string; inserted: boolean }>(STORE_AND_QUEUE, [
    d.appPk, d.idemKey, d.trigger, d.webhook, d.type, d.sessionId, d.outcome, d.body, d.receivedMs,
  ]);
  const row = stored.rows[0]!;
  return { pk: Number(row.pk), repeat: !row.inserted };
}

export async function storeDelivery(pool: pg.Pool, d: IncomingDelivery): Promise<StoredDelivery> {
  // One statement, so one round trip and one atomic commit: the delivery and, when it is
  // new (xmax = 0 only on a row this statement inserted), its place in the forward queue.
  // Counted when forwarded, not here: every delivery of an app's 15 minutes would wait for
  // the one before it to commit on the bucket's counter row.
  const effect = d.effect && d.effect.kind !== "count" && d.effect.kind !== "none" ? d.effect : undefined;
  const clients = d.clients ?? undefined;
  if (!effect && !clients) return storeAndQueue(pool, d);

  // With an effect: the delivery and its effect commit together. The effect runs in a
  // savepoint: one that cannot apply to this data leaves the delivery stored as `failed`
  // (as on SQLite, store.ts), never a lost delivery. The clients of a join (or a leave's
  // time) are applied in the same savepoint, after the live state (a join takes the time of
  // a leave that came first from there). SQLite gives them a savepoint of their own; here
  // that would be two more round trips on every join and leave, for a failure their
  // normalised values (lib/platform/client-session-facts.ts) do not produce apart from the
  // live state's own. The savepoint is not released: the COMMIT keeps it, and a RELEASE is
  // one more round trip.
  return inPgTransaction(pool, async (client) => {
    const stored = await storeAndQueue(client, d);
    if (!stored.repeat) {
      await client.query("SAVEPOINT effect");
      try {
        if (effect) await applyEffect(client, d.appPk, effect, d.receivedMs);
        if (clients) await applyClientSessionChangePg(client, clients);
      } catch (error) {
        if (!isDataError(error)) throw error;
        await client.query("ROLLBACK TO SAVEPOINT effect");
        await client.query("UPDATE webhook_deliveries SET outcome = 'failed' WHERE pk = $1", [stored.pk]);
        logger.error({ err: error instanceof Error ? error.message : String(error), trigger: d.trigger, deliveryPk: stored.pk }, "webhook delivery stored but not applied");
      }
    }
    return stored;
  });
}

/** Postgres refused the values themselves (SQLSTATE class 22 data exception, 23 integrity): not a reason to refuse the delivery. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

const STEP_STATUS = { initiated: "initiated", started: "ongoing", joined: "ongoing", left: "ongoing", ended: "ended" } as const;
const rank = (column: string) => `CASE ${column} WHEN 'ended' THEN 2 WHEN 'ongoing' THEN 1 ELSE 0 END`;

/**
 * The live state's upserts of lib/ingest/statements.ts, in Postgres: the same merge rules.
 * `least`/`greatest` skip NULLs, which is SQLite's minOf/maxOf there.
 */
const UPSERT_LIVE_SESSION = `INSERT INTO live_sessions AS s (app_pk, session_id, kind, status, initiator, receiver, receiver_type, initiated_at, started_at, ended_at, last_event_ms)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  ON CONFLICT (app_pk, session_id) DO UPDATE SET
    kind = CASE WHEN excluded.kind = 'meet' THEN 'meet' ELSE s.kind END,
    status = CASE WHEN ${rank("excluded.status")} > ${rank("s.status")} THEN excluded.status ELSE s.status END,
    initiator = coalesce(s.initiator, excluded.initiator),
    receiver = coalesce(s.receiver, excluded.receiver),
    receiver_type = coalesce(s.receiver_type, excluded.receiver_type),
    initiated_at = least(s.initiated_at, excluded.initiated_at),
    started_at = least(s.started_at, excluded.started_at),
    ended_at = greatest(s.ended_at, excluded.ended_at),
    last_event_ms = greatest(s.last_event_ms, excluded.last_event_ms)
  RETURNING pk`;

const UPSERT_OCCUPANT = `INSERT INTO live_occupants AS o (session_pk, name, joined_at, left_at, audio_only) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (session_pk, name, joined_at) DO UPDATE SET
    left_at = greatest(o.left_at, excluded.left_at),
    audio_only = coalesce(excluded.audio_only, o.audio_only)`;

const CLOSE_OPEN_STAY = `UPDATE live_occupants SET left_at = $1 WHERE pk = (
  SELECT pk FROM live_occupants WHERE session_pk = $2 AND name = $3 AND left_at IS NULL ORDER BY joined_at DESC LIMIT 1)`;

async function applyEffect(client: Queryable, appPk: number, effect: Effect, receivedMs: number): Promise<void> {
  if (effect.kind === "recording") {
    const r = effect.recording;
    // The call's has_recording flag is ClickHouse's to derive: with Postgres the calls live there.
    await client.query(
      `INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (app_pk, session_id, start_time) DO NOTHING`,
      [appPk, r.sessionId, r.recordingUrl, r.recordingDate, r.duration, r.startTime, receivedMs],
    );
  } else if (effect.kind === "live") {
    await applyLive(client, appPk, effect.live, receivedMs);
  }
}

async function applyLive(client: Queryable, appPk: number, ev: LiveEvent, nowMs: number): Promise<void> {
  const session = await client.query<{ pk: string }>(UPSERT_LIVE_SESSION, [
    appPk, ev.sessionId, ev.kind, STEP_STATUS[ev.step], ev.initiator, ev.receiver, ev.receiverType, ev.initiatedAt, ev.startedAt, ev.endedAt, nowMs,
  ]);
  const sessionPk = session.rows[0]!.pk;
  for (const occ of ev.occupants) {
    // A stay is (name, joined_at); a leave that lost its joined_at closes the latest open stay.
    if (occ.joinedAt === null && occ.leftAt !== null && ((await client.query(CLOSE_OPEN_STAY, [occ.leftAt, sessionPk, occ.name])).rowCount ?? 0) > 0) continue;
    // An occupant listed by call_ended has left by then, even when left_at is missing.
    const leftAt = occ.leftAt ?? (ev.step === "ended" ? ev.endedAt : null);
    await client.query(UPSERT_OCCUPANT, [sessionPk, occ.name, occ.joinedAt ?? 0, leftAt, occ.audioOnly]);
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

export interface ForwardDeliveriesOptions {
  batchRows?: number;
  /** Apps whose recording deliveries are left queued this time (their link flags were deferred a moment ago). */
  skipRecordingsOf?: readonly number[];
  /** Told of each app whose link flags the target deferred (a sync holds its lease): its recording deliveries stay queued. */
  onDeferred?: (appPk: number, reason: string) => void;
}

/** What the join and leave deliveries of a batch touched: their sessions' clients are sent again. */
const CLIENT_TRIGGERS: ReadonlySet<string> = new Set<string>([...JOIN_TRIGGERS, ...LEAVE_TRIGGERS]);

/**
 * Claims up to `batchRows` queued deliveries no other server holds, writes them (and the
 * event counts they touched, as absolute values) to `target`, and dequeues them once the
 * target accepted them. Returns how many were forwarded (0: nothing this server could
 * take). A target that throws leaves the batch queued for the next attempt, here or on
 * another server.
 *
 * With the deliveries go what they stored beside themselves, as SQLite's forwarder sends
 * them (forwarder.ts): the recordings of the batch's `recording_generated` deliveries
 * (their calls' link flags set by the target under each app's sync lease, decision 0034)
 * and the current `client_sessions` rows of the sessions its joins and leaves touched.
 * A claimed delivery's effect committed with it, so what is read here includes it; a later
 * change comes with a later delivery, forwarded after it. An app whose flags the target
 * deferred (ForwardDeferred: its sync holds the lease) keeps its recording deliveries
 * queued — not counted, not dequeued — and the rest of the batch goes on.
 */
export async function forwardDeliveries(pool: pg.Pool, target: ForwardTarget, options: ForwardDeliveriesOptions = {}): Promise<number> {
  return inPgTransaction(pool, async (client) => {
    const claimed = await client.query<QueuedDeliveryRow>(
      `SELECT d.pk, d.app_pk, d.idem_key, d.trigger, d.webhook, d.type, d.session_id, d.outcome, d.body,
              d.received_ms, d.repeat_count, d.last_received_ms
       FROM delivery_forward_queue q JOIN webhook_deliveries d ON d.pk = q.delivery_pk
       WHERE NOT (d.trigger = $2 AND d.app_pk = ANY($3::bigint[]))
       ORDER BY q.delivery_pk LIMIT $1 FOR UPDATE OF q SKIP LOCKED`,
      [options.batchRows ?? 2_000, RECORDING_TRIGGER, options.skipRecordingsOf ?? []],
    );
    if (claimed.rows.length === 0) return 0;
    const claimedRows: DeliveryFact[] = claimed.rows.map((r) => ({
      pk: Number(r.pk), appPk: Number(r.app_pk), idemKey: r.idem_key, trigger: r.trigger, category: triggerCategory(r.trigger),
      webhook: r.webhook, type: r.type, sessionId: r.session_id, outcome: r.outcome, body: r.body,
      receivedMs: Number(r.received_ms), bucketStart: bucketOf(r.trigger, r.body, Number(r.received_ms)),
      repeatCount: Number(r.repeat_count), lastReceivedMs: Number(r.last_received_ms),
    }));

    // Recordings first, app by app: an app whose flags must wait keeps its recording deliveries queued.
    const deferred = new Set<number>();
    for (const [appPk, recordings] of await recordingsOf(client, claimedRows)) {
      try {
        await target.writeRecordings(recordings);
      } catch (error) {
        if (!(error instanceof ForwardDeferred)) throw error;
        deferred.add(appPk);
        options.onDeferred?.(appPk, error.message);
      }
    }
    const rows = claimedRows.filter((r) => !(r.trigger === RECORDING_TRIGGER && deferred.has(r.appPk)));
    if (rows.length === 0) return 0;

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
    const clients = await clientSessionsOfSessions(client, sessionsOf(rows, (r) => CLIENT_TRIGGERS.has(r.trigger)));
    if (clients.length > 0) await target.writeClientSessions(clients.map(clientSessionRowOfSqlite));
    await client.query("DELETE FROM delivery_forward_queue WHERE delivery_pk = ANY($1::bigint[])", [rows.map((r) => r.pk)]);
    return rows.length;
  });
}

/** The distinct (app, session) pairs of the deliveries `keep` selects. */
function sessionsOf(rows: readonly DeliveryFact[], keep: (r: DeliveryFact) => boolean): Array<{ appPk: number; sessionId: string }> {
  const pairs = new Map<string, { appPk: number; sessionId: string }>();
  for (const r of rows) if (r.sessionId !== null && keep(r)) pairs.set(`${r.appPk}\u0000${r.sessionId}`, { appPk: r.appPk, sessionId: r.sessionId });
  return [...pairs.values()];
}

interface RecordingPgRow {
  pk: string; app_pk: string; session_id: string; recording_url: string; recording_date: string | null;
  duration: number | null; start_time: string | null; received_ms: string;
}

/** The stored recordings of the batch's recording deliveries' sessions, per app. */
async function recordingsOf(client: Queryable, rows: readonly DeliveryFact[]): Promise<Map<number, RecordingFact[]>> {
  const sessions = sessionsOf(rows, (r) => r.trigger === RECORDING_TRIGGER);
  const byApp = new Map<number, RecordingFact[]>();
  if (sessions.length === 0) return byApp;
  const found = await client.query<RecordingPgRow>(
    `SELECT r.pk, r.app_pk, r.session_id, r.recording_url, r.recording_date, r.duration, r.start_time, r.received_ms
     FROM recordings r JOIN unnest($1::bigint[], $2::text[]) AS t(app_pk, session_id) ON r.app_pk = t.app_pk AND r.session_id = t.session_id
     ORDER BY r.app_pk, r.pk`,
    [sessions.map((s) => s.appPk), sessions.map((s) => s.sessionId)],
  );
  for (const r of found.rows) {
    const appPk = Number(r.app_pk);
    const list = byApp.get(appPk) ?? [];
    list.push({
      pk: Number(r.pk), appPk, sessionId: r.session_id, recordingUrl: r.recording_url, recordingDate: r.recording_date,
      duration: r.duration === null ? null : Number(r.duration), startTime: r.start_time === null ? null : Number(r.start_time), receivedMs: Number(r.received_ms),
    });
    byApp.set(appPk, list);
  }
  return byApp;
}

/** Deliveries stored and not yet in ClickHouse (health, tests). */
export async function forwardBacklog(pool: pg.Pool): Promise<number> {
  const r = await pool.query<{ n: string }>("SELECT count(*) AS n FROM delivery_forward_queue");
  return Number(r.rows[0]!.n);
}

/** Seconds a sender waits before sending again a delivery Postgres could not take (down, restarting, out of connections). */
const UNAVAILABLE_RETRY_SECONDS = 2;

/**
 * The ingest's delivery store on Postgres: each delivery is stored (and queued for
 * ClickHouse, and its effect applied) in its own transaction before its answer. No group
 * commit: Postgres commits concurrent transactions together by itself, and two servers
 * share no process to batch in. A delivery Postgres does not take is answered 503 +
 * Retry-After, never 200.
 */
export class PostgresDeliveryStore implements DeliveryStore {
  private rejectionsSincePrune = 0;
  private readonly rejectedApps = new Set<number>();
  private readonly keepRejections: number;

  /** `keepRejections`: the newest refused deliveries kept per app (default 1,000, as on SQLite). */
  constructor(
    private readonly pool: pg.Pool,
    options: { keepRejections?: number } = {},
  ) {
    this.keepRejections = options.keepRejections ?? 1000;
  }

  async submit(d: PreparedDelivery): Promise<StoreOutcome> {
    try {
      const stored = await storeDelivery(this.pool, {
        appPk: d.appPk, idemKey: d.idemKey, trigger: d.trigger, webhook: d.webhook, type: d.type, sessionId: d.sessionId,
        outcome: d.known ? "applied" : "stored", body: d.body, receivedMs: d.receivedMs, effect: d.effect, clients: d.clients,
      });
      return stored.repeat ? "duplicate" : "stored";
    } catch (error) {
      throw new StoreUnavailableError(error, UNAVAILABLE_RETRY_SECONDS);
    }
  }

  noteRejection(r: Rejection): void {
    this.rejectedApps.add(r.appPk);
    // As on SQLite (store.ts): every 200 refusals this server recorded, each app it refused
    // is cut back to its newest `keepRejections`, so a sender refused without end fills nothing.
    const prune = ++this.rejectionsSincePrune >= 200 ? [...this.rejectedApps] : [];
    if (prune.length > 0) {
      this.rejectionsSincePrune = 0;
      this.rejectedApps.clear();
    }
    void this.recordRejection(r, prune).catch((error: unknown) =>
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, "webhook rejection not recorded"),
    );
  }

  private async recordRejection(r: Rejection, pruneApps: number[]): Promise<void> {
    await this.pool.query("INSERT INTO webhook_rejections (app_pk, status, code, reason, trigger, received_ms) VALUES ($1, $2, $3, $4, $5, $6)", [
      r.appPk, r.status, r.code, r.reason, r.trigger, r.receivedMs,
    ]);
    for (const appPk of pruneApps) {
      await this.pool.query(
        `DELETE FROM webhook_rejections WHERE app_pk = $1 AND pk <= (
           SELECT pk FROM webhook_rejections WHERE app_pk = $1 ORDER BY pk DESC LIMIT 1 OFFSET $2)`,
        [appPk, this.keepRejections],
      );
    }
  }

  close(): void {
    // The pool is the state store's, closed with it.
  }
}

/** The webhook route over Postgres (DATABASE_URL): apps read and deliveries stored there, shared by every server. */
export function createPostgresIngestor(pgDb: PgDb, options: { maxBodyBytes?: number; keepRejections?: number } = {}): Ingestor {
  return ingestorOver(new PostgresDeliveryStore(pgDb.$client, options), stateDbOfPostgres(pgDb), options);
}
