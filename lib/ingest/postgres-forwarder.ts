import type pg from "pg";
import { logger, type Logger } from "@/lib/log/logger";
import { backoffMs, type ForwardTarget } from "./forwarder";
import { forwardDeliveries } from "./postgres-inbox";

/**
 * The server's background forwarder when the webhook inbox is in Postgres (DATABASE_URL;
 * decision 0035 §6): every server runs one, each claims batches of the shared queue with
 * `FOR UPDATE SKIP LOCKED` (postgres-inbox.ts), so they share the work and never send a
 * row at the same time. Unlike SQLite's Forwarder there is no cursor row to keep its
 * failures in: they are this process's own (the backlog itself is the queue, read by
 * forward-backlog.ts from any server).
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
 * The process's forwarder's state, for the Sync page and /api/health on this server: on
 * globalThis, as Next's bundle (the Sync page) has its own copy of this module.
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

export class PostgresForwarder {
  private running = false;
  private loop: Promise<void> | undefined;
  private sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private readonly status: PostgresForwarderStatus = { lastSuccessMs: null, failures: 0, lastError: null, nextAttemptMs: null };
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
    try {
      const n = await forwardDeliveries(this.pool, this.target, { batchRows: this.options.batchRows });
      if (n > 0) Object.assign(this.status, { lastSuccessMs: Date.now(), failures: 0, lastError: null, nextAttemptMs: null });
      return n;
    } catch (error) {
      this.status.failures += 1;
      this.status.lastError = scrub(error);
      this.status.nextAttemptMs = Date.now() + backoffMs(this.status.failures, this.options.minBackoffMs ?? 1_000, this.options.maxBackoffMs ?? 60_000);
      if (this.status.failures === 1) this.log.warn({ err: this.status.lastError }, "forwarding to ClickHouse failed; retrying");
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
    const s = this.sleeper;
    if (s) {
      clearTimeout(s.timer);
      s.resolve();
    }
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
      if (pauseMs > 0 && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.sleeper = undefined;
            resolve();
          }, pauseMs);
          timer.unref();
          this.sleeper = { timer, resolve };
        });
      }
    }
  }
}
