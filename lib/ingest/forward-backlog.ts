import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { isPostgresState } from "@/db/state";
import { clickHouseConfigured } from "@/lib/clickhouse/client";

/**
 * What the ClickHouse forwarder (forwarder.ts) still has to copy, read from SQLite alone
 * so that any process can tell (the Sync page, /api/health), whichever process forwards.
 */
export interface ForwardingBacklog {
  /** Deliveries, recordings and participant sessions (new or changed) stored locally and not yet in ClickHouse. */
  pending: number;
  /** False when `pending` is the cheap upper bound (see EXACT_BACKLOG_ROWS). */
  exact: boolean;
  /** When the oldest pending delivery or recording arrived (epoch ms), null when none. */
  oldestReceivedMs: number | null;
  /** Its age in whole seconds at `nowMs`, null when nothing is pending. */
  oldestAgeSeconds: number | null;
  /** The last batch ClickHouse accepted (epoch ms), null before the first. */
  lastSuccessMs: number | null;
  /** Consecutive failed attempts; 0 when the last attempt succeeded. */
  failures: number;
  /** Why the last attempt failed (credentials scrubbed), null after a success. */
  lastError: string | null;
  /** When the next attempt after a failure is due (epoch ms). */
  nextAttemptMs: number | null;
}

/**
 * Up to this many pending rows are counted one by one; past it the figure is the pk
 * distance (`max(pk) - last_pk`), which costs nothing and overstates only by rows deleted
 * since (a removed app's), so that a health check stays cheap after a long outage.
 */
export const EXACT_BACKLOG_ROWS = 10_000;

interface StreamRow {
  stream: string;
  last_pk: number;
  failures: number;
  last_error: string | null;
  last_success_ms: number | null;
  next_attempt_ms: number | null;
}

/** Each stream's table and the column its cursor follows (client_sessions: the change stamp). */
const STREAM_TABLES = {
  deliveries: { table: "webhook_deliveries", key: "pk" },
  recordings: { table: "recordings", key: "pk" },
  client_sessions: { table: "client_sessions", key: "seq" },
} as const;

/**
 * The SQLite file's backlog of every app together (the forwarder is one for all apps; /api/health
 * shows the same figure to anyone, and it names no app).
 */
export function getForwardingBacklog(db: Db, nowMs = Date.now()): ForwardingBacklog {
  const sqlite = db.$client;
  const streams = sqlite.prepare<[], StreamRow>("SELECT stream, last_pk, failures, last_error, last_success_ms, next_attempt_ms FROM clickhouse_forwarding").all();
  const byStream = new Map(streams.map((s) => [s.stream, s]));
  let pending = 0;
  let exact = true;
  let oldest: number | null = null;
  for (const [stream, { table, key }] of Object.entries(STREAM_TABLES)) {
    const from = byStream.get(stream)?.last_pk ?? 0;
    const max = sqlite.prepare<[], number | null>(`SELECT max(${key}) FROM ${table}`).pluck().get() ?? 0;
    if (max <= from) continue;
    if (max - from <= EXACT_BACKLOG_ROWS) {
      pending += sqlite.prepare<[number], number>(`SELECT count(*) FROM ${table} WHERE ${key} > ?`).pluck().get(from) ?? 0;
    } else {
      pending += max - from;
      exact = false;
    }
    const first = sqlite.prepare<[number], number>(`SELECT received_ms FROM ${table} WHERE ${key} > ? ORDER BY ${key} LIMIT 1`).pluck().get(from);
    if (first !== undefined && (oldest === null || first < oldest)) oldest = first;
  }
  let lastSuccessMs: number | null = null;
  let failures = 0;
  let lastError: string | null = null;
  let nextAttemptMs: number | null = null;
  for (const s of streams) {
    if (s.last_success_ms !== null) lastSuccessMs = Math.max(lastSuccessMs ?? 0, s.last_success_ms);
    if (s.failures > failures) {
      failures = s.failures;
      lastError = s.last_error;
      nextAttemptMs = s.next_attempt_ms;
    }
  }
  return {
    pending,
    exact,
    oldestReceivedMs: oldest,
    oldestAgeSeconds: oldest === null ? null : Math.max(0, Math.floor((nowMs - oldest) / 1000)),
    lastSuccessMs,
    failures,
    lastError,
    nextAttemptMs,
  };
}

/**
 * The backlog of the state store `db` holds: SQLite's streams above (synchronous), or on
 * Postgres (DATABASE_URL; decision 0035 §6) the shared forward queue — what every server
 * still has to send, counted exactly (it holds only what is pending) — with the last
 * success and failure of any server's forwarder, kept in Postgres's `clickhouse_forwarding`
 * row of stream `deliveries` (postgres-forwarder.ts).
 */
export async function readForwardingBacklog(db: Db, nowMs = Date.now()): Promise<ForwardingBacklog> {
  if (!isPostgresState(db)) return getForwardingBacklog(db, nowMs);
  const result = await (db as unknown as PgDb).execute<{
    pending: string; oldest: string | null; last_success_ms: string | null; failures: string | null; last_error: string | null; next_attempt_ms: string | null;
  }>(
    sql`SELECT q.pending, q.oldest, f.last_success_ms, f.failures, f.last_error, f.next_attempt_ms
        FROM (SELECT count(*) AS pending, min(d.received_ms) AS oldest FROM delivery_forward_queue q JOIN webhook_deliveries d ON d.pk = q.delivery_pk) q
        LEFT JOIN clickhouse_forwarding f ON f.stream = 'deliveries'`,
  );
  const row = result.rows[0];
  const num = (v: string | null | undefined) => (v == null ? null : Number(v));
  const oldest = num(row?.oldest);
  return {
    pending: Number(row?.pending ?? 0),
    exact: true,
    oldestReceivedMs: oldest,
    oldestAgeSeconds: oldest === null ? null : Math.max(0, Math.floor((nowMs - oldest) / 1000)),
    lastSuccessMs: num(row?.last_success_ms),
    failures: num(row?.failures) ?? 0,
    lastError: row?.last_error ?? null,
    nextAttemptMs: num(row?.next_attempt_ms),
  };
}

/**
 * The backlog in ClickHouse mode; null when the facts stay in SQLite (nothing is
 * forwarded). The failure's text only for admins: it may name the ClickHouse host.
 */
export async function getForwardingStatus(db: Db, options: { withError: boolean }): Promise<ForwardingBacklog | null> {
  if (!clickHouseConfigured()) return null;
  const backlog = await readForwardingBacklog(db);
  return options.withError ? backlog : { ...backlog, lastError: null };
}
