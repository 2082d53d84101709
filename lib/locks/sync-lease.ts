import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { isPostgresState } from "@/db/state";
import { acquireLease, releaseLease, renewLease } from "./postgres-lease";
import { acquireLock, releaseLock, renewLock, type LockResult } from "./sync-lock";

/**
 * The sync's one-run-per-app lease on whichever store holds Callboard's state
 * (docs/decisions/0035-state-in-postgres.md §7): the SQLite lock of sync-lock.ts on the
 * embedded file, the Postgres lease of postgres-lease.ts with DATABASE_URL. Both answer
 * the same `LockResult`, so a refused run is worded the same way on either.
 *
 * The Postgres lease runs on the handle's pool, never inside a transaction: it must
 * commit at once to be seen by the other servers.
 */

const poolOf = (db: Db) => (db as unknown as PgDb).$client;

export async function takeSyncLease(db: Db, appPk: number, owner: string, leaseMs: number): Promise<LockResult> {
  return isPostgresState(db) ? acquireLease(poolOf(db), appPk, owner, leaseMs) : acquireLock(db, appPk, owner, leaseMs);
}

/** Extends the lease; false when it is no longer ours (it ran out and another run took it). */
export async function renewSyncLease(db: Db, appPk: number, owner: string, leaseMs: number): Promise<boolean> {
  return isPostgresState(db) ? renewLease(poolOf(db), appPk, owner, leaseMs) : renewLock(db, appPk, owner, leaseMs);
}

export async function releaseSyncLease(db: Db, appPk: number, owner: string): Promise<void> {
  if (isPostgresState(db)) await releaseLease(poolOf(db), appPk, owner);
  else releaseLock(db, appPk, owner);
}
