/**
 * Test fixture: a Callboard server holding an app's sync lease in Postgres and renewing
 * it, until the test SIGKILLs it. Env: DATABASE_URL, APP_PK, OWNER, LEASE_MS. Prints
 * `held` once the lease is taken.
 */
import pg from "pg";
import { acquireLease, renewLease } from "./postgres-lease";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
const appPk = Number(process.env.APP_PK);
const owner = process.env.OWNER ?? "fixture";
const leaseMs = Number(process.env.LEASE_MS);

const lease = await acquireLease(pool, appPk, owner, leaseMs);
if (!lease.acquired) {
  process.stdout.write(`refused by ${lease.owner}\n`);
  process.exit(2);
}
process.stdout.write("held\n");
setInterval(() => void renewLease(pool, appPk, owner, leaseMs), Math.max(50, Math.floor(leaseMs / 4)));
