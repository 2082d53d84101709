import type Database from "better-sqlite3";
import { logger } from "@/lib/log/logger";
import type { LiveEvent, RecordingEvent } from "./envelope";
import { noteWriteFailure, noteWriteSuccess, writeFailureReason } from "@/lib/health/write-state";
import type { WalSyncer } from "./wal-sync";
import { WriteBackoff, type WriteBackoffOptions } from "./write-backoff";

/**
 * Persist first, then apply, in one transaction — and many deliveries per transaction.
 *
 * A delivery is answered 200 only once the transaction holding it is on disk: either
 * the connection runs `synchronous = FULL` (the commit itself fsyncs), or it runs
 * NORMAL and a `WalSyncer` fsyncs the WAL off the event loop after the commit (the
 * default, see wal-sync.ts). Deliveries that arrive while the event loop is busy are
 * grouped: the first one schedules a flush on `setImmediate`, the flush writes
 * everything queued so far in one transaction (group commit).
 * Each delivery's effects run in a savepoint: one that fails to apply is still stored
 * (outcome `failed`) and never takes the rest of the batch down.
 * A batch that cannot be written at all (disk full, lock held past the busy timeout)
 * stores nothing and is answered 503 + Retry-After; the ingest then pauses its tries
 * (write-backoff.ts) and reports the failure to /api/health (lib/health/write-state.ts).
 */

export type Effect =
  | { kind: "recording"; recording: RecordingEvent }
  | { kind: "live"; live: LiveEvent }
  | { kind: "count" }
  | { kind: "none" };

export interface PreparedDelivery {
  appPk: number;
  idemKey: string;
  trigger: string;
  webhook: string;
  type: string | null;
  sessionId: string | null;
  body: string;
  receivedMs: number;
  /** 15-minute bucket (epoch seconds) the delivery is counted in. */
  bucketStart: number;
  /** `stored` when nothing but the count applies (a trigger Callboard does not know). */
  known: boolean;
  effect: Effect;
}

export interface Rejection {
  appPk: number;
  status: number;
  code: string;
  reason: string;
  trigger: string | null;
  receivedMs: number;
}

export type StoreOutcome = "stored" | "duplicate";

export class StoreUnavailableError extends Error {
  constructor(
    cause: unknown,
    /** Seconds until the ingest tries the warehouse again (the answer's Retry-After). */
    readonly retryAfterSeconds = 5,
  ) {
    super("The warehouse could not store the delivery.", { cause });
    this.name = "StoreUnavailableError";
  }
}

const STATUS_RANK = `CASE %s WHEN 'ended' THEN 2 WHEN 'ongoing' THEN 1 ELSE 0 END`;
const rank = (col: string) => STATUS_RANK.replace("%s", col);
const minOf = (a: string, b: string) => `CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL THEN ${a} ELSE min(${a}, ${b}) END`;
const maxOf = (a: string, b: string) => `CASE WHEN ${a} IS NULL THEN ${b} WHEN ${b} IS NULL THEN ${a} ELSE max(${a}, ${b}) END`;

/** The statements of the write path, prepared once per connection. */
function prepare(sqlite: Database.Database) {
  return {
    delivery: sqlite.prepare<[number, string, string, string, string | null, string | null, string, string, number, number], { pk: number; repeat_count: number }>(
      `INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, last_received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (app_pk, idem_key) DO UPDATE SET repeat_count = repeat_count + 1, last_received_ms = excluded.last_received_ms
       RETURNING pk, repeat_count`,
    ),
    markFailed: sqlite.prepare<[number]>(`UPDATE webhook_deliveries SET outcome = 'failed' WHERE pk = ?`),
    count: sqlite.prepare<[number, string, number]>(
      `INSERT INTO event_counts (app_pk, trigger, bucket_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (app_pk, bucket_start, trigger) DO UPDATE SET count = count + 1`,
    ),
    recording: sqlite.prepare<[number, string, string, string | null, number | null, number, number]>(
      `INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_pk, session_id, start_time) DO NOTHING`,
    ),
    flagCall: sqlite.prepare<[number, number, string]>(
      `UPDATE calls SET has_recording = 1, updated_ms = ? WHERE app_pk = ? AND session_id = ? AND has_recording = 0`,
    ),
    session: sqlite.prepare<Record<string, string | number | null>, { pk: number }>(
      `INSERT INTO live_sessions (app_pk, session_id, kind, status, initiator, receiver, receiver_type, initiated_at, started_at, ended_at, last_event_ms)
       VALUES (@appPk, @sessionId, @kind, @status, @initiator, @receiver, @receiverType, @initiatedAt, @startedAt, @endedAt, @now)
       ON CONFLICT (app_pk, session_id) DO UPDATE SET
         -- call_initiated has no meeting twin: a meeting_* event makes the session a meeting.
         kind = CASE WHEN excluded.kind = 'meet' THEN 'meet' ELSE kind END,
         status = CASE WHEN ${rank("excluded.status")} > ${rank("status")} THEN excluded.status ELSE status END,
         initiator = coalesce(initiator, excluded.initiator),
         receiver = coalesce(receiver, excluded.receiver),
         receiver_type = coalesce(receiver_type, excluded.receiver_type),
         initiated_at = ${minOf("initiated_at", "excluded.initiated_at")},
         started_at = ${minOf("started_at", "excluded.started_at")},
         ended_at = ${maxOf("ended_at", "excluded.ended_at")},
         last_event_ms = max(last_event_ms, excluded.last_event_ms)
       RETURNING pk`,
    ),
    occupant: sqlite.prepare<[number, string, number, number | null, number | null]>(
      `INSERT INTO live_occupants (session_pk, name, joined_at, left_at, audio_only) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session_pk, name, joined_at) DO UPDATE SET
         left_at = ${maxOf("left_at", "excluded.left_at")},
         audio_only = coalesce(excluded.audio_only, audio_only)`,
    ),
    closeOpenStay: sqlite.prepare<[number, number, string]>(
      `UPDATE live_occupants SET left_at = ? WHERE pk = (
         SELECT pk FROM live_occupants WHERE session_pk = ? AND name = ? AND left_at IS NULL ORDER BY joined_at DESC LIMIT 1)`,
    ),
    rejection: sqlite.prepare<[number, number, string, string, string | null, number]>(
      `INSERT INTO webhook_rejections (app_pk, status, code, reason, trigger, received_ms) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    pruneRejections: sqlite.prepare<[number, number, number]>(
      `DELETE FROM webhook_rejections WHERE app_pk = ? AND pk <= (
         SELECT pk FROM webhook_rejections WHERE app_pk = ? ORDER BY pk DESC LIMIT 1 OFFSET ?)`,
    ),
    // Oldest first by pk (pk grows with time), a bounded slice per run.
    pruneDeliveries: sqlite.prepare<[number]>(
      `DELETE FROM webhook_deliveries WHERE pk IN (SELECT pk FROM webhook_deliveries ORDER BY pk LIMIT 5000) AND received_ms < ?`,
    ),
    pruneLive: sqlite.prepare<[number, number]>(
      `DELETE FROM live_sessions WHERE (status = 'ended' AND last_event_ms < ?) OR last_event_ms < ?`,
    ),
  };
}
type Statements = ReturnType<typeof prepare>;

const STEP_STATUS = { initiated: "initiated", started: "ongoing", joined: "ongoing", left: "ongoing", ended: "ended" } as const;

function applyLive(st: Statements, appPk: number, ev: LiveEvent, nowMs: number): void {
  const row = st.session.get({
    appPk, sessionId: ev.sessionId, kind: ev.kind, status: STEP_STATUS[ev.step],
    initiator: ev.initiator, receiver: ev.receiver, receiverType: ev.receiverType,
    initiatedAt: ev.initiatedAt, startedAt: ev.startedAt, endedAt: ev.endedAt, now: nowMs,
  });
  if (!row) return;
  for (const occ of ev.occupants) {
    // A stay is (name, joined_at); a leave that lost its joined_at closes the latest open stay.
    if (occ.joinedAt === null && occ.leftAt !== null && st.closeOpenStay.run(occ.leftAt, row.pk, occ.name).changes > 0) continue;
    // An occupant listed by call_ended has left by then, even when left_at is missing.
    const leftAt = occ.leftAt ?? (ev.step === "ended" ? ev.endedAt : null);
    st.occupant.run(row.pk, occ.name, occ.joinedAt ?? 0, leftAt, occ.audioOnly === null ? null : occ.audioOnly ? 1 : 0);
  }
}

function applyEffect(st: Statements, d: PreparedDelivery): void {
  const e = d.effect;
  if (e.kind === "recording") {
    const r = e.recording;
    st.recording.run(d.appPk, r.sessionId, r.recordingUrl, r.recordingDate, r.duration, r.startTime, d.receivedMs);
    st.flagCall.run(d.receivedMs, d.appPk, r.sessionId);
  } else if (e.kind === "live") {
    applyLive(st, d.appPk, e.live, d.receivedMs);
  }
}

interface Job {
  delivery: PreparedDelivery;
  resolve: (o: StoreOutcome) => void;
  reject: (e: Error) => void;
}

export interface GroupCommitterOptions {
  /** Most deliveries in one transaction (default 2000). */
  maxBatch?: number;
  /** Rejections kept per app (default 1000). */
  keepRejections?: number;
  /**
   * Days raw deliveries are kept (default 90; 0 keeps them forever). Their effects —
   * recordings, counts, live state — stay; repeats come within minutes, so the
   * idempotency keys need far less.
   */
  retainDeliveriesDays?: number;
  /** Set when the connection commits with `synchronous = NORMAL`: answers wait for its fsync. */
  syncer?: WalSyncer;
  /** How long to stop trying after a batch could not be written (write-backoff.ts). */
  backoff?: WriteBackoffOptions;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export class GroupCommitter {
  private jobs: Job[] = [];
  private rejections: Rejection[] = [];
  private scheduled = false;
  private closed = false;
  private rejectionsSincePrune = 0;
  private readonly rejectedApps = new Set<number>();
  private lastLivePruneMs = 0;
  private lastDeliveryPruneMs = 0;
  private readonly retainDeliveriesMs: number;
  private readonly syncer: WalSyncer | undefined;
  private readonly st: Statements;
  private readonly maxBatch: number;
  private readonly keepRejections: number;
  private readonly writeBatch: (jobs: Job[], rejections: Rejection[]) => StoreOutcome[];
  private readonly backoff: WriteBackoff;

  /** Batches committed and deliveries written: for tests and the benchmark. */
  readonly stats = { batches: 0, deliveries: 0, largestBatch: 0 };

  constructor(private readonly sqlite: Database.Database, options: GroupCommitterOptions = {}) {
    this.st = prepare(sqlite);
    this.maxBatch = options.maxBatch ?? 2000;
    this.keepRejections = options.keepRejections ?? 1000;
    this.retainDeliveriesMs = (options.retainDeliveriesDays ?? 90) * DAY_MS;
    this.syncer = options.syncer;
    this.backoff = new WriteBackoff(sqlite, options.backoff);
    this.applyOne = sqlite.transaction((d: PreparedDelivery) => applyEffect(this.st, d));
    this.writeBatch = sqlite.transaction((jobs: Job[], rejections: Rejection[]) => {
      const outcomes: StoreOutcome[] = [];
      for (const job of jobs) outcomes.push(this.writeOne(job.delivery));
      for (const r of rejections) this.st.rejection.run(r.appPk, r.status, r.code, r.reason, r.trigger, r.receivedMs);
      return outcomes;
    });
  }

  /** A nested better-sqlite3 transaction is a SAVEPOINT: a throw undoes only this delivery's effects. */
  private readonly applyOne: (d: PreparedDelivery) => void;

  private writeOne(d: PreparedDelivery): StoreOutcome {
    const row = this.st.delivery.get(d.appPk, d.idemKey, d.trigger, d.webhook, d.type, d.sessionId, d.known ? "applied" : "stored", d.body, d.receivedMs, d.receivedMs);
    if (!row || row.repeat_count > 0) return "duplicate";
    this.st.count.run(d.appPk, d.trigger, d.bucketStart);
    // Chat and unknown triggers have no effect beyond the count: no savepoint needed.
    if (d.effect.kind === "count" || d.effect.kind === "none") return "stored";
    try {
      this.applyOne(d);
    } catch (error) {
      // Disk full, a lock, an I/O error: the batch fails and is answered 503, so the
      // platform sends it again. Only an effect that cannot apply to this data is
      // stored as `failed`.
      if (writeFailureReason(error) !== null) throw error;
      this.st.markFailed.run(row.pk);
      logger.error({ err: error instanceof Error ? error.message : String(error), trigger: d.trigger, deliveryPk: row.pk }, "webhook delivery stored but not applied");
    }
    return "stored";
  }

  /**
   * Queues a delivery; resolves once the transaction holding it has committed. While
   * the warehouse is refusing writes it rejects at once (the answer is 503 + Retry-After).
   */
  submit(delivery: PreparedDelivery): Promise<StoreOutcome> {
    if (this.closed) return Promise.reject(new StoreUnavailableError(new Error("ingest closed")));
    if (this.backoff.remainingMs() > 0) {
      return Promise.reject(new StoreUnavailableError(new Error("warehouse not taking writes"), this.backoff.retryAfterSeconds()));
    }
    return new Promise<StoreOutcome>((resolve, reject) => {
      this.jobs.push({ delivery, resolve, reject });
      this.schedule();
    });
  }

  /** Records a refused delivery (best effort, written with the next batch; the oldest go first when writes fail). */
  noteRejection(rejection: Rejection): void {
    if (this.closed) return;
    if (this.rejections.length >= this.maxBatch) this.rejections.shift();
    this.rejections.push(rejection);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Writes everything queued now, in batches of at most `maxBatch`. */
  flush(): void {
    if (this.backoff.remainingMs() > 0) {
      this.refuseQueued(new Error("warehouse not taking writes"));
      return;
    }
    while (this.jobs.length > 0 || this.rejections.length > 0) {
      const jobs = this.jobs.splice(0, this.maxBatch);
      const rejections = this.rejections.splice(0, this.maxBatch);
      let outcomes: StoreOutcome[];
      try {
        outcomes = this.writeBatch(jobs, rejections);
      } catch (error) {
        // Not one delivery of the batch is stored: each is answered 503 and sent again.
        // The rest of the queue is refused at once rather than waiting on a lock in turn.
        const reason = writeFailureReason(error) ?? "unknown";
        noteWriteFailure(reason);
        this.backoff.failed();
        logger.error({ err: error instanceof Error ? error.message : String(error), reason, deliveries: jobs.length }, "webhook batch not committed");
        this.jobs.unshift(...jobs);
        this.rejections.unshift(...rejections);
        this.refuseQueued(error);
        return;
      }
      this.backoff.succeeded();
      this.stats.batches += 1;
      this.stats.deliveries += jobs.length;
      this.stats.largestBatch = Math.max(this.stats.largestBatch, jobs.length);
      const answer = (error?: Error) => {
        if (error) {
          noteWriteFailure(writeFailureReason(error) ?? "io_error");
          logger.error({ err: error.message, deliveries: jobs.length }, "webhook batch committed but not fsynced");
          const failure = new StoreUnavailableError(error);
          for (const job of jobs) job.reject(failure);
        } else {
          if (jobs.length > 0) noteWriteSuccess();
          jobs.forEach((job, i) => job.resolve(outcomes[i]));
        }
      };
      if (this.syncer && jobs.length > 0) this.syncer.sync(answer);
      else answer();
      this.rejectionsSincePrune += rejections.length;
      for (const r of rejections) this.rejectedApps.add(r.appPk);
    }
    this.housekeeping();
  }

  /** Answers every queued delivery 503; queued rejections stay for a later batch (at most `maxBatch`). */
  private refuseQueued(cause: unknown): void {
    const failure = new StoreUnavailableError(cause, this.backoff.retryAfterSeconds());
    for (const job of this.jobs.splice(0)) job.reject(failure);
    if (this.rejections.length > this.maxBatch) this.rejections.splice(0, this.rejections.length - this.maxBatch);
  }

  private housekeeping(): void {
    try {
      if (this.rejectionsSincePrune >= 200) {
        this.rejectionsSincePrune = 0;
        for (const appPk of this.rejectedApps) this.st.pruneRejections.run(appPk, appPk, this.keepRejections);
        this.rejectedApps.clear();
      }
      const now = Date.now();
      if (this.retainDeliveriesMs > 0 && now - this.lastDeliveryPruneMs > 60_000) {
        this.lastDeliveryPruneMs = now;
        this.st.pruneDeliveries.run(now - this.retainDeliveriesMs);
      }
      if (now - this.lastLivePruneMs > HOUR_MS) {
        this.lastLivePruneMs = now;
        // Ended sessions stay a week for "recently ended"; one silent for 30 days never ended.
        this.st.pruneLive.run(now - 7 * DAY_MS, now - 30 * DAY_MS);
      }
    } catch (error) {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, "webhook housekeeping failed");
    }
  }

  /** Flushes what is queued and refuses new work. */
  close(): void {
    this.flush();
    this.syncer?.flushSync();
    this.closed = true;
  }
}
