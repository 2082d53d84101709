import { env } from "@/lib/config/env";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { getDb, type Db } from "./client";
import { migratePostgres, openPostgres, type PgDb } from "./postgres/client";
import { isPostgresState, stateDbOfPostgres } from "./state";

export type { Db } from "./client";
export { openDatabase, closeDb } from "./client";

const globalForState = globalThis as unknown as { callboardPostgresState?: { url: string; pgDb: PgDb; state: Db } };

/**
 * Callboard's state: the SQLite file at DATABASE_PATH (migrated on first use), or with
 * DATABASE_URL the Postgres every server shares (docs/decisions/0035-state-in-postgres.md),
 * as the `Db` the state modules take (db/state.ts: `tablesOf`, awaited queries). One pool
 * per process, cached on `globalThis` so that dev reloads reuse it. Postgres is migrated
 * by `prepareState()` (server start, `npm run db:migrate`), which is asynchronous; `db()`
 * itself opens the pool only (no connection until the first query).
 */
export function db(): Db {
  const config = env();
  if (config.DATABASE_URL !== undefined) return postgresState(config.DATABASE_URL).state;
  return getDb(config.DATABASE_PATH, { backupBeforeMigration: config.MIGRATION_BACKUP === "on" });
}

function postgresState(url: string): { pgDb: PgDb; state: Db } {
  const cached = globalForState.callboardPostgresState;
  if (cached && cached.url === url) return cached;
  const pgDb = openPostgres(parsePostgresConfig(url));
  const entry = { url, pgDb, state: stateDbOfPostgres(pgDb) };
  globalForState.callboardPostgresState = entry;
  return entry;
}

/**
 * The Postgres database behind `db()` when the state is in Postgres (the webhook inbox
 * and its forwarder speak SQL to its pool directly), undefined on SQLite.
 */
export function postgresStateDb(): PgDb | undefined {
  const url = env().DATABASE_URL;
  return url === undefined ? undefined : postgresState(url).pgDb;
}

/**
 * Makes the state store ready before a server or a command uses it: on SQLite the file is
 * opened and migrated (as `db()` does); on Postgres the migrations run under their advisory
 * lock, so several servers starting at once take turns (db/postgres/client.ts).
 */
export async function prepareState(): Promise<Db> {
  const url = env().DATABASE_URL;
  if (url !== undefined) await migratePostgres(parsePostgresConfig(url));
  return db();
}

/** Closes the process's Postgres pool (end of a command; tests). Nothing to do on SQLite here (closeDb). */
export async function closePostgresState(): Promise<void> {
  const cached = globalForState.callboardPostgresState;
  globalForState.callboardPostgresState = undefined;
  if (cached) await cached.pgDb.$client.end();
}

export { isPostgresState };
