import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { logger } from "@/lib/log/logger";
import { runBackfills } from "./backfills";
import { backupBeforeMigration } from "./backup";
import * as schema from "./schema";

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  readonly?: boolean;
  /**
   * Before a pending migration changes a file that holds data, keep a copy beside it
   * (default true; `MIGRATION_BACKUP=off` turns it off for the server and the CLI).
   */
  backupBeforeMigration?: boolean;
}

const MIGRATIONS_FOLDER = path.join(process.cwd(), "db", "migrations");

/**
 * The page size of a warehouse file created from now on; a file keeps the size it was
 * created with (SQLite changes it only while a file is empty). A call's row holds its
 * raw record (1–1.4 KB): a 4 KB page fits two and leaves a fifth of it empty, and each
 * page a transaction writes costs two writes to the WAL and two more at the checkpoint.
 * With 16 KB pages a backfill writes about a fifth fewer bytes in a quarter as many
 * pages (docs/decisions/0025).
 */
export const NEW_FILE_PAGE_SIZE = 16_384;

/**
 * Opens a warehouse file with the pragmas every connection needs: WAL (readers never
 * block the writer), a busy timeout (a second process waits for the lock instead of
 * failing), foreign keys, and NORMAL sync (durable at checkpoints; the webhook path
 * asks for FULL where a 200 must mean durable).
 */
export function openDatabase(file: string, options: OpenOptions = {}): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new Database(file, { readonly: options.readonly ?? false });
  // Before journal_mode, which writes a new file's header; a no-op on a file with tables.
  if (!options.readonly) sqlite.pragma(`page_size = ${NEW_FILE_PAGE_SIZE}`);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("cache_size = -65536");
  sqlite.pragma("temp_store = MEMORY");
  const db = drizzle(sqlite, { schema }) as Db;
  if (options.migrate !== false && !options.readonly) {
    if (options.backupBeforeMigration !== false) {
      backupBeforeMigration(sqlite, MIGRATIONS_FOLDER, (copy) =>
        logger.warn({ copy }, "Migrating the warehouse: copying it first, as it is, beside it (delete the copy once the new version runs well; MIGRATION_BACKUP=off skips it)"),
      );
    }
    migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
    runBackfills(sqlite);
  }
  return db;
}

const globalForDb = globalThis as unknown as { callboardDb?: { file: string; db: Db } };

/** The process's one connection, created on first use (and reused across dev reloads). */
export function getDb(file: string, options: Pick<OpenOptions, "backupBeforeMigration"> = {}): Db {
  const cached = globalForDb.callboardDb;
  if (cached && cached.file === file) return cached.db;
  const db = openDatabase(file, options);
  globalForDb.callboardDb = { file, db };
  return db;
}

export function closeDb(): void {
  globalForDb.callboardDb?.db.$client.close();
  globalForDb.callboardDb = undefined;
}

/**
 * A write that is nice to have but must never hold up or fail the request making it
 * (a token's last use): it does not wait for the write lock, and a warehouse that
 * is locked, full or failing skips it. Returns whether it ran.
 */
export function tryWrite(db: Db, write: () => void): boolean {
  const sqlite = db.$client;
  if (sqlite.inTransaction) {
    write();
    return true;
  }
  const normal = Number(sqlite.pragma("busy_timeout", { simple: true }));
  sqlite.pragma("busy_timeout = 0");
  try {
    write();
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY)/.test(code)) return false;
    throw error;
  } finally {
    sqlite.pragma(`busy_timeout = ${normal}`);
  }
}
