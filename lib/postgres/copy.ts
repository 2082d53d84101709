import { getTableColumns, getTableName } from "drizzle-orm";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import type pg from "pg";
import type { Db } from "@/db/client";
import { STATE_TABLES } from "@/db/postgres/schema";
import { bucketOf } from "@/lib/ingest/forwarder";
import { JOIN_TRIGGERS, LEAVE_TRIGGERS } from "@/lib/platform/client-session-facts";
import { RECORDING_TRIGGER } from "@/lib/platform/webhook-envelope";
import { inPgTransaction } from "./transaction";

/**
 * `npm run warehouse -- copy --to postgres`: Callboard's own state (db/postgres/schema.ts's
 * STATE_TABLES) from a SQLite file into the Postgres at DATABASE_URL, row for row and
 * value for value — encrypted secrets stay the same ciphertext, readable under the same
 * AUTH_SECRET; JSON stays the same text; pks stay the same, so every reference holds.
 *
 * Resumable: tables go parents first, each in key order, in batches; each batch is one
 * Postgres transaction with its checkpoint (`state_copy_progress`), so a rerun after an
 * interruption starts after the last batch committed, and `ON CONFLICT DO NOTHING`
 * makes a batch sent twice harmless. At the end every table is counted on both sides.
 * Run it with the server stopped: rows changed after their batch was copied are not
 * followed (the count check catches added and removed rows).
 */

export interface StateCopyProgress {
  table: string;
  done: number;
  total: number;
}

export interface StateCopyCount {
  table: string;
  /** Rows sent by this run. */
  copied: number;
  sqlite: number;
  postgres: number;
}

export class StateCopyMismatchError extends Error {
  constructor(readonly counts: StateCopyCount[]) {
    const off = counts.filter((c) => c.sqlite !== c.postgres).map((c) => `${c.table} (SQLite ${c.sqlite}, Postgres ${c.postgres})`);
    super(
      `Count check failed: ${off.join(", ")}. Was the SQLite file written during the copy, or did Postgres already hold state? ` +
        "Stop the server, then run the copy again (or with --restart into an empty database).",
    );
    this.name = "StateCopyMismatchError";
  }
}

export interface StateCopyOptions {
  /** Rows per batch (capped by Postgres's 65,535 parameters per statement). */
  batchSize?: number;
  /** Forget the checkpoints and send every row again (rows already there are kept). */
  restart?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: StateCopyProgress) => void;
}

interface TablePlan {
  name: string;
  columns: SQLiteColumn[];
  keyColumns: SQLiteColumn[];
  /** The pk of an identity column, whose sequence must continue after the copied rows. */
  identity: string | undefined;
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;
const MAX_PARAMETERS = 65_535;

function planFor(table: SQLiteTable): TablePlan {
  const config = getTableConfig(table);
  const columns = Object.values(getTableColumns(table)) as SQLiteColumn[];
  const single = columns.filter((c) => c.primary);
  const keyColumns = single.length > 0 ? single : (config.primaryKeys[0]?.columns ?? []);
  if (keyColumns.length === 0) throw new Error(`${config.name} has no primary key: it cannot be copied resumably`);
  const identity = single.length === 1 && (single[0] as SQLiteColumn & { autoIncrement?: boolean }).autoIncrement ? single[0]!.name : undefined;
  return { name: getTableName(table), columns, keyColumns, identity };
}

/** A SQLite value as Postgres takes it: booleans were stored as 0/1; everything else is already its value. */
function toPostgres(column: SQLiteColumn, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (column.columnType === "SQLiteBoolean") return value === 1 || value === 1n || value === true;
  return value;
}

export async function copyStateToPostgres(sqlite: Db, pool: pg.Pool, options: StateCopyOptions = {}): Promise<StateCopyCount[]> {
  const plans = STATE_TABLES.map(planFor);
  if (options.restart) await pool.query("DELETE FROM state_copy_progress");
  const copiedByTable = new Map<string, number>();

  for (const plan of plans) {
    options.signal?.throwIfAborted();
    const columnList = plan.columns.map((c) => quote(c.name)).join(", ");
    const keyList = plan.keyColumns.map((c) => quote(c.name)).join(", ");
    const total = (sqlite.$client.prepare(`SELECT count(*) AS n FROM ${quote(plan.name)}`).get() as { n: number }).n;
    const checkpoint = await pool.query<{ last_key: string; copied: string }>("SELECT last_key, copied FROM state_copy_progress WHERE table_name = $1", [plan.name]);
    let lastKey = checkpoint.rows[0] ? (JSON.parse(checkpoint.rows[0].last_key) as unknown[]) : undefined;
    let done = checkpoint.rows[0] ? Number(checkpoint.rows[0].copied) : 0;
    let copied = 0;
    const batchSize = Math.max(1, Math.min(options.batchSize ?? 1_000, Math.floor(MAX_PARAMETERS / plan.columns.length)));
    // Keyset paging in SQLite's own key order; row values compare the whole (composite) key.
    const after = `(${keyList}) > (${plan.keyColumns.map(() => "?").join(", ")})`;
    const first = sqlite.$client.prepare(`SELECT ${columnList} FROM ${quote(plan.name)} ORDER BY ${keyList} LIMIT ?`);
    const next = sqlite.$client.prepare(`SELECT ${columnList} FROM ${quote(plan.name)} WHERE ${after} ORDER BY ${keyList} LIMIT ?`);
    options.onProgress?.({ table: plan.name, done: Math.min(done, total), total });

    for (;;) {
      options.signal?.throwIfAborted();
      const rows = (lastKey === undefined ? first.all(batchSize) : next.all(...lastKey, batchSize)) as Array<Record<string, unknown>>;
      if (rows.length === 0) break;
      const values: unknown[] = [];
      const tuples = rows.map((row) => {
        const placeholders = plan.columns.map((column) => {
          values.push(toPostgres(column, row[column.name]));
          return `$${values.length}`;
        });
        return `(${placeholders.join(", ")})`;
      });
      const last = rows[rows.length - 1]!;
      lastKey = plan.keyColumns.map((c) => last[c.name]);
      done += rows.length;
      await inPgTransaction(pool, async (client) => {
        await client.query(`INSERT INTO ${quote(plan.name)} (${columnList}) VALUES ${tuples.join(", ")} ON CONFLICT DO NOTHING`, values);
        await client.query(
          `INSERT INTO state_copy_progress (table_name, last_key, copied, updated_ms) VALUES ($1, $2, $3, $4)
           ON CONFLICT (table_name) DO UPDATE SET last_key = excluded.last_key, copied = excluded.copied, updated_ms = excluded.updated_ms`,
          [plan.name, JSON.stringify(lastKey), done, Date.now()],
        );
      });
      copied += rows.length;
      options.onProgress?.({ table: plan.name, done: Math.min(done, total), total });
      if (rows.length < batchSize) break;
    }
    if (plan.identity) {
      // Rows keep their pks: the identity continues after the largest, or a new row would collide.
      await pool.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT max(${quote(plan.identity)}) FROM ${quote(plan.name)}), 1), (SELECT max(${quote(plan.identity)}) FROM ${quote(plan.name)}) IS NOT NULL)`,
        [quote(plan.name), plan.identity],
      );
    }
    copiedByTable.set(plan.name, copied);
  }

  // client_sessions keep their change stamps: new changes in Postgres take stamps after them (postgres-client-sessions.ts).
  await pool.query(
    "SELECT setval('client_sessions_seq_stamp', GREATEST((SELECT max(seq) FROM client_sessions), 1), (SELECT max(seq) FROM client_sessions) IS NOT NULL)",
  );

  // The inbox's backlog: deliveries the SQLite forwarder had not sent to ClickHouse yet are
  // queued for the Postgres forwarder (lib/ingest/postgres-inbox.ts), which has no cursor.
  const cursor = (stream: string) => (sqlite.$client.prepare("SELECT last_pk FROM clickhouse_forwarding WHERE stream = ?").pluck().get(stream) as number | undefined) ?? 0;
  await queueBacklog(pool, { deliveries: cursor("deliveries"), recordings: cursor("recordings"), clientSessions: cursor("client_sessions") });

  const counts: StateCopyCount[] = [];
  for (const plan of plans) {
    const sqliteCount = (sqlite.$client.prepare(`SELECT count(*) AS n FROM ${quote(plan.name)}`).get() as { n: number }).n;
    const postgresCount = Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${quote(plan.name)}`)).rows[0]!.n);
    counts.push({ table: plan.name, copied: copiedByTable.get(plan.name) ?? 0, sqlite: sqliteCount, postgres: postgresCount });
  }
  if (counts.some((c) => c.sqlite !== c.postgres)) throw new StateCopyMismatchError(counts);
  return counts;
}

/**
 * Queues for the Postgres forwarder what the SQLite forwarder had not sent: the deliveries
 * above its cursor, and the deliveries that made the recordings and participant-session
 * changes above their own cursors (the Postgres forwarder sends those with the deliveries
 * that made them, postgres-inbox.ts). In the same transaction the queued deliveries are
 * taken out of the copied event counts: SQLite counted each delivery when it stored it, the
 * Postgres forwarder counts each when it forwards it, so one left in would be counted
 * twice. Only rows this call queued are taken out (a queued row is not queued again).
 */
async function queueBacklog(pool: pg.Pool, after: { deliveries: number; recordings: number; clientSessions: number }): Promise<void> {
  await inPgTransaction(pool, async (client) => {
    const queued = await client.query<{ app_pk: string; trigger: string; body: string; received_ms: string }>(
      `WITH queued AS (
         INSERT INTO delivery_forward_queue (delivery_pk)
         SELECT d.pk FROM webhook_deliveries d WHERE d.pk > $1
           OR (d.trigger = $2 AND EXISTS (SELECT 1 FROM recordings r WHERE r.pk > $3 AND r.app_pk = d.app_pk AND r.session_id = d.session_id))
           OR (d.trigger = ANY($4::text[]) AND EXISTS (SELECT 1 FROM client_sessions c WHERE c.seq > $5 AND c.app_pk = d.app_pk AND c.session_id = d.session_id))
         ON CONFLICT DO NOTHING RETURNING delivery_pk
       )
       SELECT d.app_pk, d.trigger, d.body, d.received_ms FROM queued q JOIN webhook_deliveries d ON d.pk = q.delivery_pk`,
      [after.deliveries, RECORDING_TRIGGER, after.recordings, [...JOIN_TRIGGERS, ...LEAVE_TRIGGERS], after.clientSessions],
    );
    const byBucket = new Map<string, { appPk: string; trigger: string; bucketStart: number; n: number }>();
    for (const r of queued.rows) {
      const bucketStart = bucketOf(r.trigger, r.body, Number(r.received_ms));
      const key = `${r.app_pk}|${bucketStart}|${r.trigger}`;
      const entry = byBucket.get(key) ?? { appPk: r.app_pk, trigger: r.trigger, bucketStart, n: 0 };
      entry.n += 1;
      byBucket.set(key, entry);
    }
    const buckets = [...byBucket.values()];
    if (buckets.length > 0) {
      await client.query(
        `UPDATE event_counts c SET count = greatest(c.count - t.n, 0)
         FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[]) AS t(app_pk, trigger, bucket_start, n)
         WHERE c.app_pk = t.app_pk AND c.trigger = t.trigger AND c.bucket_start = t.bucket_start`,
        [buckets.map((b) => b.appPk), buckets.map((b) => b.trigger), buckets.map((b) => b.bucketStart), buckets.map((b) => b.n)],
      );
    }
  });
}
