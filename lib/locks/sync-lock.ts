import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Db } from "@/db/client";

/**
 * One sync per app at a time, across processes: the `sync_locks` row is the lock and
 * carries a lease the holder renews. A lease that ran out (holder SIGKILLed, machine
 * suspended) can be taken over; so can the lease of a holder on this host whose pid no
 * longer exists, and one left by a run of this very process that has ended (its release
 * failed on a full or locked warehouse), without waiting for the lease to run out.
 */
export const DEFAULT_LEASE_MS = 60_000;

/** Owners of the locks this process's runs hold right now. */
const liveOwners = new Set<string>();

export function newOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}

/** True when `owner` names a process on this host that is gone, or a run of this process that ended. */
export function holderIsDead(owner: string): boolean {
  const [host, pidText] = owner.split(":");
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return !liveOwners.has(owner);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

export type LockResult =
  | { acquired: true; tookOverFrom: string | null }
  | { acquired: false; owner: string; acquiredMs: number; expiresMs: number };

interface LockRow {
  owner: string;
  acquired_ms: number;
  expires_ms: number;
}

export function acquireLock(db: Db, appPk: number, owner: string, leaseMs = DEFAULT_LEASE_MS): LockResult {
  const sqlite = db.$client;
  const select = sqlite.prepare<[number], LockRow>("SELECT owner, acquired_ms, expires_ms FROM sync_locks WHERE app_pk = ?");
  const upsert = sqlite.prepare(
    `INSERT INTO sync_locks (app_pk, owner, acquired_ms, expires_ms) VALUES (?, ?, ?, ?)
     ON CONFLICT (app_pk) DO UPDATE SET owner = excluded.owner, acquired_ms = excluded.acquired_ms, expires_ms = excluded.expires_ms`,
  );
  const tx = sqlite.transaction((): LockResult => {
    const now = Date.now();
    const row = select.get(appPk);
    if (row && row.owner !== owner && row.expires_ms > now && !holderIsDead(row.owner)) {
      return { acquired: false, owner: row.owner, acquiredMs: row.acquired_ms, expiresMs: row.expires_ms };
    }
    upsert.run(appPk, owner, now, now + leaseMs);
    return { acquired: true, tookOverFrom: row && row.owner !== owner ? row.owner : null };
  });
  const result = tx.immediate();
  if (result.acquired) liveOwners.add(owner);
  return result;
}

/** Extends the lease; false when the lock is no longer ours (taken over after expiry). */
export function renewLock(db: Db, appPk: number, owner: string, leaseMs = DEFAULT_LEASE_MS): boolean {
  const r = db.$client
    .prepare("UPDATE sync_locks SET expires_ms = ? WHERE app_pk = ? AND owner = ?")
    .run(Date.now() + leaseMs, appPk, owner);
  return r.changes === 1;
}

/** The run is over even when the DELETE fails: the row it leaves is taken over at once. */
export function releaseLock(db: Db, appPk: number, owner: string): void {
  liveOwners.delete(owner);
  db.$client.prepare("DELETE FROM sync_locks WHERE app_pk = ? AND owner = ?").run(appPk, owner);
}
