import { env } from "@/lib/config/env";
import { getDb, type Db } from "./client";

export type { Db } from "./client";
export { openDatabase, closeDb } from "./client";

/**
 * With DATABASE_URL, Callboard's state belongs in Postgres; the modules that read and
 * write it still speak SQLite (docs/decisions/0035-state-in-postgres.md says in which
 * order they move). Until they do, every use of the state refuses instead of quietly
 * keeping a second server's users, apps and locks in its own SQLite file.
 */
export class StateInPostgresNotYetSupportedError extends Error {
  constructor() {
    super(
      "DATABASE_URL is set, but serving Callboard's state from Postgres is not yet supported: " +
        "sign-in, apps, tokens, the webhook inbox, syncs, alerts and statements still read the local SQLite file. " +
        "What works with DATABASE_URL today: `npm run db:migrate` (creates and migrates the Postgres schema) and " +
        "`npm run warehouse -- copy --to postgres` (copies a SQLite file's state into it). " +
        "Unset DATABASE_URL to run one Callboard server on the SQLite file at DATABASE_PATH.",
    );
    this.name = "StateInPostgresNotYetSupportedError";
  }
}

/** The warehouse at DATABASE_PATH, migrated on first use. */
export function db(): Db {
  const config = env();
  if (config.DATABASE_URL !== undefined) throw new StateInPostgresNotYetSupportedError();
  return getDb(config.DATABASE_PATH, { backupBeforeMigration: config.MIGRATION_BACKUP === "on" });
}
