import type Database from "better-sqlite3";
import { logger } from "@/lib/log/logger";
import type { ClientSessionChange } from "@/lib/platform/client-session-facts";
import { applyClientSessionChange } from "./client-sessions";
import { applyEffect, prepareStatements, type PreparedDelivery, type Statements } from "./statements";
import { noteWriteFailure, noteWriteSuccess, writeFailureReason } from "./write-state";
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
 * (write-backoff.ts) and reports the failure to /api/health (lib/ingest/write-state.ts).
 */

// A delivery ready to store, and what it changes: defined beside the statements that apply it.
export type { Effect, PreparedDelivery } from "./statements";

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
    this.st = prepareStatements(sqlite);
    this.maxBatch = options.maxBatch ?? 2000;
    this.keepRejections = options.keepRejections ?? 1000;
    this.retainDeliveriesMs = (options.retainDeliveriesDays ?? 90) * DAY_MS;
    this.syncer = options.syncer;
    this.backoff = new WriteBackoff(sqlite, options.backoff);
    this.applyOne = sqlite.transaction((d: PreparedDelivery) => applyEffect(this.st, d));
    this.applyClients = sqlite.transaction((c: ClientSessionChange) => applyClientSessionChange(this.st.clients, c));
    this.writeBatch = sqlite.transaction((jobs: Job[], rejections: Rejection[]) => {
      const outcomes: StoreOutcome[] = [];
      for (const job of jobs) outcomes.push(this.writeOne(job.delivery));
      for (const r of rejections) this.st.rejection.run(r.appPk, r.status, r.code, r.reason, r.trigger, r.receivedMs);
      return outcomes;
    });
  }

  /** A nested better-sqlite3 transaction is a SAVEPOINT: a throw undoes only this delivery's effects. */
  private readonly applyOne: (d: PreparedDelivery) => void;
  /** Its own savepoint too: a join whose live state could not apply still counts its client. */
  private readonly applyClients: (c: ClientSessionChange) => void;

  private writeOne(d: PreparedDelivery): StoreOutcome {
    const row = this.st.delivery.get(d.appPk, d.idemKey, d.trigger, d.webhook, d.type, d.sessionId, d.known ? "applied" : "stored", d.body, d.receivedMs, d.receivedMs);
    if (!row || row.repeat_count > 0) return "duplicate";
    this.st.count.run(d.appPk, d.trigger, d.bucketStart);
    // Chat and unknown triggers have no effect beyond the count: no savepoint needed.
    if (d.effect.kind === "count" || d.effect.kind === "none") return "stored";
    if (!this.tryApply(() => this.applyOne(d), d, row.pk)) this.st.markFailed.run(row.pk);
    // After the live state: a join takes the time of a leave that came before it from there.
    const clients = d.clients;
    if (clients) this.tryApply(() => this.applyClients(clients), d, row.pk);
    return "stored";
  }

  /** Runs one savepoint; false (logged) when it cannot apply to this data. */
  private tryApply(apply: () => void, d: PreparedDelivery, deliveryPk: number): boolean {
    try {
      apply();
      return true;
    } catch (error) {
      // Disk full, a lock, an I/O error: the batch fails and is answered 503, so the
      // platform sends it again. Only an effect that cannot apply to this data is
      // stored as `failed`.
      if (writeFailureReason(error) !== null) throw error;
      logger.error({ err: error instanceof Error ? error.message : String(error), trigger: d.trigger, deliveryPk }, "webhook delivery stored but not applied");
      return false;
    }
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
