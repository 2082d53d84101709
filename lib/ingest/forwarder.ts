import type { Statement } from "better-sqlite3";
import type { Db } from "@/db/client";
import { logger, type Logger } from "@/lib/log/logger";
import { clientSessionRowOfSqlite, type ClientSessionSqliteRow, type DeliveryFact as WarehouseDelivery, type RecordingFact as WarehouseRecording } from "@/lib/clickhouse/rows";
import { countBucket, isObject, triggerCategory } from "../platform/webhook-envelope";
import { WakeableSleep } from "./wakeable-sleep";

/**
 * ClickHouse mode: the ingest keeps answering from SQLite (a delivery is durable in the
 * local file before its 200, whatever ClickHouse is doing), and this forwarder copies
 * what it stored on to ClickHouse in batches, oldest first: the raw deliveries, the
 * recordings, the event counts each delivery touched, and the participant sessions'
 * clients (`client_sessions`, followed by their change stamp `seq` instead of a pk: a
 * leave moves a session's seq on, so it is sent again with its left time).
 *
 * - **Exactly where it stopped.** `clickhouse_forwarding.last_pk` moves only after
 *   ClickHouse accepted a batch. pks grow in commit order (one SQLite writer at a time,
 *   AUTOINCREMENT), so "every row up to last_pk" is exact, and the backlog is the rows above.
 * - **Idempotent.** A batch may be written twice (killed between ClickHouse's answer and the
 *   cursor update, a lost answer). Every target table collapses a re-sent row by its key, and
 *   event counts are sent as absolute values (counts only grow: the largest wins), never as
 *   increments. See docs/decisions/0015-clickhouse-live-paths.md.
 * - **Retries with back-off.** A failed batch is tried again after 1 s, 2 s, 4 s … at most
 *   a minute; the failure (scrubbed of credentials by the target) is kept in SQLite for the
 *   Sync page and /api/health.
 */

/**
 * Thrown by a target that cannot write a batch yet for a reason that is not a failure (the
 * calls' link flags wait for a running sync's lease): the batch stays in the backlog and is
 * tried again after the first back-off pause, without counting as a failure.
 */
export class ForwardDeferred extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForwardDeferred";
  }
}

export type ForwardStream = "deliveries" | "recordings" | "client_sessions";
const STREAMS: readonly ForwardStream[] = ["deliveries", "recordings", "client_sessions"];

/** A stored delivery as ClickHouse's `webhook_deliveries` takes it, with its SQLite pk. */
export interface DeliveryFact extends WarehouseDelivery {
  pk: number;
}

/** A stored recording as ClickHouse's `recordings` takes it, with its SQLite pk. */
export interface RecordingFact extends WarehouseRecording {
  pk: number;
}

/** A count as SQLite holds it now (absolute, not an increment). */
export interface EventCountFact {
  appPk: number;
  trigger: string;
  bucketStart: number;
  count: number;
}

/** Where facts go. Every write must be idempotent: the same rows may arrive again. */
export interface ForwardTarget {
  writeDeliveries(rows: DeliveryFact[]): Promise<void>;
  writeEventCounts(rows: EventCountFact[]): Promise<void>;
  writeRecordings(rows: RecordingFact[]): Promise<void>;
  /** `client_sessions` rows as ClickHouse takes them (rows.ts clientSessionRow), their seq the version. */
  writeClientSessions(rows: Array<Record<string, unknown>>): Promise<void>;
}

export interface ForwarderOptions {
  /** Most rows per batch (default 2,000). */
  batchRows?: number;
  /** A batch stops growing past this many body bytes (default 8 MB: bodies may be 1 MB each). */
  batchBytes?: number;
  /** Pause between polls when nothing is pending (default 500 ms). */
  idleMs?: number;
  /** First retry delay after a failure (default 1 s), doubled per failure up to `maxBackoffMs` (default 60 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  log?: Logger;
}

interface DeliveryRow {
  pk: number;
  app_pk: number;
  idem_key: string;
  trigger: string;
  webhook: string;
  type: string | null;
  session_id: string | null;
  outcome: string;
  body: string;
  received_ms: number;
  repeat_count: number;
  last_received_ms: number;
}

interface RecordingRow {
  pk: number;
  app_pk: number;
  session_id: string;
  recording_url: string;
  recording_date: string | null;
  duration: number | null;
  start_time: number | null;
  received_ms: number;
}

/** The bucket a stored body was counted in; its arrival time's bucket if it cannot be read. */
export function bucketOf(trigger: string, body: string, receivedMs: number): number {
  try {
    const env: unknown = JSON.parse(body);
    const data = isObject(env) && isObject(env.data) ? env.data : {};
    return countBucket(trigger, data, receivedMs);
  } catch {
    return countBucket(trigger, {}, receivedMs);
  }
}

export function backoffMs(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

export class Forwarder {
  private readonly st: {
    cursor: Statement<[string], { last_pk: number; failures: number; next_attempt_ms: number | null }>;
    deliveries: Statement<[number], DeliveryRow>;
    recordings: Statement<[number, number], RecordingRow>;
    clientSessions: Statement<[number, number], ClientSessionSqliteRow>;
    count: Statement<[number, number, string], number>;
    success: Statement<[string, number, number, number, number]>;
    failure: Statement<[string, string, number, number]>;
    defer: Statement<[string, number]>;
  };
  private readonly batchRows: number;
  private readonly batchBytes: number;
  private readonly idleMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly log: Logger;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly pause = new WakeableSleep();

  constructor(
    db: Db,
    private readonly target: ForwardTarget,
    options: ForwarderOptions = {},
  ) {
    const sqlite = db.$client;
    this.batchRows = options.batchRows ?? 2_000;
    this.batchBytes = options.batchBytes ?? 8 * 1024 * 1024;
    this.idleMs = options.idleMs ?? 500;
    this.minBackoffMs = options.minBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.log = (options.log ?? logger).child({ part: "clickhouse-forwarder" });
    this.st = {
      cursor: sqlite.prepare("SELECT last_pk, failures, next_attempt_ms FROM clickhouse_forwarding WHERE stream = ?"),
      deliveries: sqlite.prepare(
        `SELECT pk, app_pk, idem_key, trigger, webhook, type, session_id, outcome, body, received_ms, repeat_count, last_received_ms
         FROM webhook_deliveries WHERE pk > ? ORDER BY pk LIMIT ${this.batchRows}`,
      ),
      recordings: sqlite.prepare(
        `SELECT pk, app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms
         FROM recordings WHERE pk > ? ORDER BY pk LIMIT ?`,
      ),
      clientSessions: sqlite.prepare("SELECT * FROM client_sessions WHERE seq > ? ORDER BY seq LIMIT ?"),
      count: sqlite.prepare<[number, number, string], number>(
        "SELECT count FROM event_counts WHERE app_pk = ? AND bucket_start = ? AND trigger = ?",
      ).pluck(),
      // The cursor only moves forward: two forwarders (two processes) may overlap, never undo.
      success: sqlite.prepare(
        `INSERT INTO clickhouse_forwarding (stream, last_pk, forwarded, last_attempt_ms, last_success_ms) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (stream) DO UPDATE SET last_pk = max(last_pk, excluded.last_pk), forwarded = forwarded + excluded.forwarded,
           failures = 0, last_error = NULL, last_attempt_ms = excluded.last_attempt_ms,
           last_success_ms = excluded.last_success_ms, next_attempt_ms = NULL`,
      ),
      failure: sqlite.prepare(
        `INSERT INTO clickhouse_forwarding (stream, failures, last_error, last_attempt_ms, next_attempt_ms) VALUES (?, 1, ?, ?, ?)
         ON CONFLICT (stream) DO UPDATE SET failures = failures + 1, last_error = excluded.last_error,
           last_attempt_ms = excluded.last_attempt_ms, next_attempt_ms = excluded.next_attempt_ms`,
      ),
      defer: sqlite.prepare(
        `INSERT INTO clickhouse_forwarding (stream, next_attempt_ms) VALUES (?, ?)
         ON CONFLICT (stream) DO UPDATE SET next_attempt_ms = excluded.next_attempt_ms`,
      ),
    };
  }

  /**
   * One batch of each stream. Returns the rows forwarded (0: nothing was pending);
   * throws, after recording the failure and its retry time, when ClickHouse refused.
   */
  async forwardOnce(): Promise<number> {
    return (await this.forwardDeliveries()) + (await this.forwardRecordings()) + (await this.forwardClientSessions());
  }

  /** Forwards until nothing is pending (shutdown, tests). Throws on the first failure. */
  async drain(): Promise<void> {
    while ((await this.forwardOnce()) > 0) {
      /* next batch */
    }
  }

  /** Runs in the background until `stop`: polls, forwards, backs off after failures. */
  start(): this {
    if (this.running) return this;
    this.running = true;
    this.loop = this.run();
    return this;
  }

  /** Stops after the batch in flight (if any) is written or fails. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  /** Ends a pause early (tests; a new delivery needs no nudge, the poll finds it). */
  wake(): void {
    this.pause.wake();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let pauseMs = 0;
      const due = this.retryDueInMs();
      if (due > 0) {
        pauseMs = due;
      } else {
        try {
          const n = await this.forwardOnce();
          if (n === 0) pauseMs = this.idleMs;
        } catch {
          pauseMs = this.retryDueInMs();
        }
      }
      if (pauseMs > 0 && this.running) await this.pause.sleep(pauseMs);
    }
  }

  /** How long until a stream that failed may be tried again (0: now). */
  private retryDueInMs(): number {
    const now = Date.now();
    let wait = 0;
    for (const stream of STREAMS) {
      const next = this.st.cursor.get(stream)?.next_attempt_ms ?? null;
      if (next !== null && next > now) wait = Math.max(wait, next - now);
    }
    return wait;
  }

  private lastPk(stream: ForwardStream): number {
    return this.st.cursor.get(stream)?.last_pk ?? 0;
  }

  private async forwardDeliveries(): Promise<number> {
    const from = this.lastPk("deliveries");
    const rows: DeliveryFact[] = [];
    let bytes = 0;
    for (const r of this.st.deliveries.iterate(from)) {
      rows.push({
        pk: r.pk, appPk: r.app_pk, idemKey: r.idem_key, trigger: r.trigger, category: triggerCategory(r.trigger),
        webhook: r.webhook, type: r.type, sessionId: r.session_id, outcome: r.outcome, body: r.body,
        receivedMs: r.received_ms, bucketStart: bucketOf(r.trigger, r.body, r.received_ms),
        repeatCount: r.repeat_count, lastReceivedMs: r.last_received_ms,
      });
      bytes += r.body.length;
      if (bytes >= this.batchBytes) break;
    }
    if (rows.length === 0) return 0;
    // The counts as they stand now, for every bucket this batch touched: absolute values,
    // so a re-sent or overlapping batch writes the same or a larger count, never a sum.
    const touched = new Map<string, EventCountFact>();
    for (const d of rows) {
      const key = `${d.appPk}|${d.bucketStart}|${d.trigger}`;
      if (touched.has(key)) continue;
      const count = this.st.count.get(d.appPk, d.bucketStart, d.trigger);
      // Gone only if the app was removed meanwhile (cascade): nothing to count.
      if (count !== undefined) touched.set(key, { appPk: d.appPk, trigger: d.trigger, bucketStart: d.bucketStart, count });
    }
    await this.attempt("deliveries", rows.at(-1)!.pk, rows.length, async () => {
      await this.target.writeDeliveries(rows);
      if (touched.size > 0) await this.target.writeEventCounts([...touched.values()]);
    });
    return rows.length;
  }

  private async forwardRecordings(): Promise<number> {
    const from = this.lastPk("recordings");
    const rows: RecordingFact[] = this.st.recordings.all(from, this.batchRows).map((r) => ({
      pk: r.pk, appPk: r.app_pk, sessionId: r.session_id, recordingUrl: r.recording_url, recordingDate: r.recording_date,
      duration: r.duration, startTime: r.start_time, receivedMs: r.received_ms,
    }));
    if (rows.length === 0) return 0;
    try {
      await this.attempt("recordings", rows.at(-1)!.pk, rows.length, () => this.target.writeRecordings(rows));
    } catch (err) {
      if (!(err instanceof ForwardDeferred)) throw err;
      // Not a failure: the batch is tried again after a pause (run's retryDueInMs); nothing moved.
      this.st.defer.run("recordings", Date.now() + this.minBackoffMs);
      this.log.info({ stream: "recordings", retryInMs: this.minBackoffMs, reason: err.message }, "forwarding deferred");
      return 0;
    }
    return rows.length;
  }

  private async forwardClientSessions(): Promise<number> {
    const rows = this.st.clientSessions.all(this.lastPk("client_sessions"), this.batchRows);
    if (rows.length === 0) return 0;
    await this.attempt("client_sessions", rows.at(-1)!.seq, rows.length, () => this.target.writeClientSessions(rows.map(clientSessionRowOfSqlite)));
    return rows.length;
  }

  /** Writes one batch; moves the cursor on success, records the failure and its retry time otherwise. */
  private async attempt(stream: ForwardStream, lastPk: number, n: number, write: () => Promise<void>): Promise<void> {
    const started = Date.now();
    try {
      await write();
    } catch (err) {
      if (err instanceof ForwardDeferred) throw err;
      const failures = (this.st.cursor.get(stream)?.failures ?? 0) + 1;
      const wait = backoffMs(failures, this.minBackoffMs, this.maxBackoffMs);
      const message = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      this.st.failure.run(stream, message, started, Date.now() + wait);
      this.log.warn({ stream, failures, retryInMs: wait, err: message }, "forwarding to ClickHouse failed; will retry");
      throw err;
    }
    this.st.success.run(stream, lastPk, n, started, Date.now());
  }
}
