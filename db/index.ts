import { env } from "@/lib/config/env";
import { getDb, type Db } from "./client";

export type { Db } from "./client";
export { openDatabase, closeDb } from "./client";

/** The warehouse at DATABASE_PATH, migrated on first use. */
export function db(): Db {
  const config = env();
  return getDb(config.DATABASE_PATH, { backupBeforeMigration: config.MIGRATION_BACKUP === "on" });
}
