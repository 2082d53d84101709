import type pg from "pg";
import type { LockResult } from "./sync-lock";

/**
 * The sync lease of lib/locks/sync-lock.ts, in Postgres, for several Callboard servers
 * (DATABASE_URL; docs/decisions/0035-state-in-postgres.md): one `sync_locks` row per app
 * is the lease; the holder renews it; a lease that ran out — its server was killed, lost
 * its network or froze — is taken over by the next server that asks.
 *
 * Unlike the SQLite lock, time is the database's clock, never the servers': two servers
 * whose clocks disagree still agree on when a lease ran out. And there is no "is its pid
 * alive" shortcut: the holder may be another machine, so only the lease's end counts.
 * Each call is one statement, atomic under concurrency (INSERT … ON CONFLICT … WHERE is
 * re-checked against the latest row version), so two servers asking at once get one yes.
 */

/** Epoch milliseconds by the database's clock (clock_timestamp: the statement's own instant, not the transaction's). */
const DB_NOW_MS = "(floor(extract(epoch from clock_timestamp()) * 1000))::bigint";

interface LeaseRow {
  owner: string;
  acquired_ms: string;
  expires_ms: string;
  previous_owner: string | null;
}

export async function acquireLease(pool: pg.Pool, appPk: number, owner: string, leaseMs: number): Promise<LockResult> {
  const taken = await pool.query<LeaseRow>(
    `WITH previous AS (SELECT owner FROM sync_locks WHERE app_pk = $1)
     INSERT INTO sync_locks AS l (app_pk, owner, acquired_ms, expires_ms)
     VALUES ($1, $2, ${DB_NOW_MS}, ${DB_NOW_MS} + $3)
     ON CONFLICT (app_pk) DO UPDATE SET
       owner = excluded.owner,
       acquired_ms = CASE WHEN l.owner = excluded.owner THEN l.acquired_ms ELSE excluded.acquired_ms END,
       expires_ms = excluded.expires_ms
     WHERE l.owner = excluded.owner OR l.expires_ms <= ${DB_NOW_MS}
     RETURNING l.owner, l.acquired_ms, l.expires_ms, (SELECT owner FROM previous) AS previous_owner`,
    [appPk, owner, leaseMs],
  );
  const row = taken.rows[0];
  if (row) return { acquired: true, tookOverFrom: row.previous_owner !== null && row.previous_owner !== owner ? row.previous_owner : null };
  const holder = await pool.query<LeaseRow>("SELECT owner, acquired_ms, expires_ms, NULL AS previous_owner FROM sync_locks WHERE app_pk = $1", [appPk]);
  const current = holder.rows[0];
  // Released between the two statements: ask again (the next attempt finds no holder or a live one).
  if (!current) return acquireLease(pool, appPk, owner, leaseMs);
  return { acquired: false, owner: current.owner, acquiredMs: Number(current.acquired_ms), expiresMs: Number(current.expires_ms) };
}

/** Extends the lease; false when it is no longer ours (it ran out and another server took it). */
export async function renewLease(pool: pg.Pool, appPk: number, owner: string, leaseMs: number): Promise<boolean> {
  const renewed = await pool.query(`UPDATE sync_locks SET expires_ms = ${DB_NOW_MS} + $3 WHERE app_pk = $1 AND owner = $2`, [appPk, owner, leaseMs]);
  return renewed.rowCount === 1;
}

export async function releaseLease(pool: pg.Pool, appPk: number, owner: string): Promise<void> {
  await pool.query("DELETE FROM sync_locks WHERE app_pk = $1 AND owner = $2", [appPk, owner]);
}
