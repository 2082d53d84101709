import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import type { PostgresConfig } from "@/lib/postgres/config";

/**
 * Callboard's state in Postgres (DATABASE_URL; docs/decisions/0035-state-in-postgres.md):
 * the pool and the migrations. Tables: db/postgres/schema.ts, derived from db/schema.
 */

export type PgDb = NodePgDatabase & { $client: pg.Pool };

const MIGRATIONS_FOLDER = path.join(process.cwd(), "db", "postgres", "migrations");

/**
 * The key of the session-level advisory lock that migrations run under: several
 * servers starting at once (and `npm run db:migrate` beside them) take turns, and each
 * after the first finds nothing left to apply. Any fixed 64-bit number works; this one
 * spells "callboard" in its bytes, so it is recognisable in pg_locks.
 */
export const MIGRATION_LOCK_KEY = 0x63616c6c626f6172n;

export function openPostgres(config: PostgresConfig, options: { max?: number } = {}): PgDb {
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: options.max ?? 10,
    // A request waits at most this long for a connection: Postgres down means a fast 503, not a hung request.
    connectionTimeoutMillis: 5_000,
    application_name: "callboard",
  });
  // An idle connection that breaks (Postgres restarted) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  return drizzle(pool) as PgDb;
}

export interface PostgresMigrationReport {
  /** Migrations (their journal tags) this call applied; empty when Postgres was up to date. */
  applied: string[];
}

/**
 * Applies pending migrations under the advisory lock. Safe to run from several
 * processes at once: the others wait for the lock, then find the journal complete.
 */
export async function migratePostgres(config: PostgresConfig): Promise<PostgresMigrationReport> {
  const client = new pg.Client({ connectionString: config.connectionString, application_name: "callboard-migrate", connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    // The driver's message names the host and port, never the password; the URL shown is the redacted one.
    throw new Error(`Postgres at ${config.redacted} cannot be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY.toString()]);
    try {
      const before = await appliedHashes(client);
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
      const after = await appliedHashes(client);
      const journal = readJournal();
      const applied = journal.filter((entry) => !before.has(entry.hash) && after.has(entry.hash)).map((entry) => entry.tag);
      return { applied };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    await client.end();
  }
}

async function appliedHashes(client: pg.Client): Promise<Set<string>> {
  const exists = await client.query<{ present: boolean }>("SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present");
  if (!exists.rows[0]?.present) return new Set();
  const rows = await client.query<{ hash: string }>("SELECT hash FROM drizzle.__drizzle_migrations");
  return new Set(rows.rows.map((r) => r.hash));
}

/** Each migration's journal tag (its file name) with the hash drizzle records once it is applied. */
function readJournal(): Array<{ tag: string; hash: string }> {
  const files = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as { entries: Array<{ tag: string }> };
  return files.map((file, i) => ({ tag: journal.entries[i]?.tag ?? String(i), hash: file.hash }));
}
