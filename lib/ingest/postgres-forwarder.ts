import type pg from "pg";
import { logger, type Logger } from "@/lib/log/logger";
import { backoffMs, type ForwardTarget } from "./forwarder";
import { forwardDeliveries } from "./postgres-inbox";
import { WakeableSleep } from "./wakeable-sleep";

/**
 * The server's background forwarder when the webhook inbox is in Postgres (DATABASE_URL;
 * decision 0035 §6): every server runs one, each claims batches of the shared queue with
 * `FOR UPDATE SKIP LOCKED` (postgres-inbox.ts), so they share the work and never send a
 * row at the same time.
 *
 * Its last success and failure are kept in Postgres (`clickhouse_forwarding`, the row of
 * stream `deliveries`, as SQLite's forwarder keeps its own), so the Sync page and
 * /api/health of any server show them, whichever server failed (forward-backlog.ts). The
 * row's `failures` counts consecutive failed attempts of every server (0 after any
 * server's success); each server's back-off follows its own failures, kept here.
 */
export interface PostgresForwarderStatus {
  lastSuccessMs: number | null;
  failures: number;
  lastError: string | null;
  nextAttemptMs: number | null;
}

export interface PostgresForwarderOptions {
  batchRows?: number;
  /** Pause when the queue is empty (ms). */
  idleMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  log?: Logger;
}

/**
 * The process's forwarder's state (its back-off): on globalThis, as Next's bundle has its
 * own copy of this module.
 */
const holder = globalThis as { callboardPostgresForwarderStatus?: PostgresForwarderStatus };

export function postgresForwarderStatus(): PostgresForwarderStatus | undefined {
  return holder.callboardPostgresForwarderStatus;
}

/** ClickHouse's error text with any credentials in a URL masked (the admin's Sync page shows it). */
function scrub(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\/\/[^@/\s]*@/g, "//***@").slice(0, 500);
}

const RECORD_SUCCESS = `INSERT INTO clickhouse_forwarding (stream, forwarded, last_attempt_ms, last_success_ms) VALUES ('deliveries', $1, $2, $3)
  ON CONFLICT (stream) DO UPDATE SET forwarded = clickhouse_forwarding.forwarded + excluded.forwarded, failures = 0, last_error = NULL,
    last_attempt_ms = excluded.last_attempt_ms, last_success_ms = excluded.last_success_ms, next_attempt_ms = NULL`;
const RECORD_FAILURE = `INSERT INTO clickhouse_forwarding (stream, failures, last_error, last_attempt_ms, next_attempt_ms) VALUES ('deliveries', 1, $1, $2, $3)
  ON CONFLICT (stream) DO UPDATE SET failures = clickhouse_forwarding.failures + 1, last_error = excluded.last_error,
    last_attempt_ms = excluded.last_attempt_ms, next_attempt_ms = excluded.next_attempt_ms`;

export class PostgresForwarder {
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly pause = new WakeableSleep();
  private readonly status: PostgresForwarderStatus = { lastSuccessMs: null, failures: 0, lastError: null, nextAttemptMs: null };
  /** Apps whose link flags wait for their sync (its lease), until when: their recording deliveries are left queued meanwhile. */
  private readonly deferredUntil = new Map<number, number>();
  private readonly log: Logger;

  constructor(
    private readonly pool: pg.Pool,
    private readonly target: ForwardTarget,
    private readonly options: PostgresForwarderOptions = {},
  ) {
    this.log = (options.log ?? logger).child({ part: "clickhouse-forwarder" });
  }

  /** One batch; throws (after recording the failure) when Postgres or ClickHouse refused. */
  async forwardOnce(): Promise<number> {
    const started = Date.now();
    for (const [appPk, until] of this.deferredUntil) if (until <= started) this.deferredUntil.delete(appPk);
    try {
      const n = await forwardDeliveries(this.pool, this.target, {
        batchRows: this.options.batchRows,
        skipRecordingsOf: [...this.deferredUntil.keys()],
        onDeferred: (appPk, reason) => {
          // Not a failure: the app's recordings are tried again after a pause, the rest goes on.
          const retryInMs = this.options.minBackoffMs ?? 1_000;
          this.deferredUntil.set(appPk, Date.now() + retryInMs);
          this.log.info({ appPk, retryInMs, reason }, "forwarding of recordings deferred");
        },
      });
      if (n > 0) {
        Object.assign(this.status, { lastSuccessMs: Date.now(), failures: 0, lastError: null, nextAttemptMs: null });
        await this.pool.query(RECORD_SUCCESS, [n, started, this.status.lastSuccessMs]);
      }
      return n;
    } catch (error) {
      this.status.failures += 1;
      this.status.lastError = scrub(error);
      this.status.nextAttemptMs = Date.now() + backoffMs(this.status.failures, this.options.minBackoffMs ?? 1_000, this.options.maxBackoffMs ?? 60_000);
      if (this.status.failures === 1) this.log.warn({ err: this.status.lastError }, "forwarding to ClickHouse failed; retrying");
      // For every server's Sync page and health; Postgres itself may be what failed (best effort).
      await this.pool.query(RECORD_FAILURE, [this.status.lastError, started, this.status.nextAttemptMs]).catch(() => {});
      throw error;
    }
  }

  start(): this {
    if (this.running) return this;
    this.running = true;
    holder.callboardPostgresForwarderStatus = this.status;
    this.loop = this.run();
    return this;
  }

  /** Stops after the batch in flight: it commits (dequeued) or rolls back (queued for any server). */
  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
    if (holder.callboardPostgresForwarderStatus === this.status) holder.callboardPostgresForwarderStatus = undefined;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let pauseMs = 0;
      try {
        if ((await this.forwardOnce()) === 0) pauseMs = this.options.idleMs ?? 500;
      } catch {
        pauseMs = Math.max(0, (this.status.nextAttemptMs ?? 0) - Date.now());
      }
      if (pauseMs > 0 && this.running) await this.pause.sleep(pauseMs);
    }
  }
}
