import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Backups of the warehouse file (issue 27, item 1; docs/decisions/0030-backups.md): an
 * online copy while the server runs and syncs, putting one back while nothing has the file
 * open, and a copy beside the file before a migration changes it.
 */

export interface BackupProgress {
  totalPages: number;
  donePages: number;
}

export interface BackupResult {
  bytes: number;
  pages: number;
}

/** Pages copied per step of the backup API (16 MB at 16 KB pages): a progress tick without a syscall storm. */
const PAGES_PER_STEP = 1024;

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupError";
  }
}

/**
 * `PRAGMA integrity_check` of a file, opened read-only: "ok" or the problems SQLite lists
 * (the first ten).
 */
export function integrityProblems(file: string): string[] {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = sqlite.pragma("integrity_check(10)") as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
  } finally {
    sqlite.close();
  }
}

/**
 * Copies the warehouse at `source` into a new file `target` while other processes keep
 * writing. SQLite's backup API restarts from the first page whenever another connection
 * writes, so under a steady webhook load a plain backup could never finish; instead the
 * copy runs inside one read transaction, which in WAL mode pins a snapshot without
 * blocking any writer: the copy is the warehouse as it was at that instant. The copy goes
 * to `target.partial`, is switched to the rollback journal (one self-contained file),
 * checked with `PRAGMA integrity_check`, and only then renamed to `target`.
 */
export async function backupWarehouse(source: string, target: string, onProgress?: (p: BackupProgress) => void): Promise<BackupResult> {
  if (!existsSync(source)) throw new BackupError(`There is no warehouse at ${source}.`);
  if (existsSync(target)) throw new BackupError(`${target} exists already: name a new file (a backup never overwrites one).`);
  const partial = `${target}.partial`;
  mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  rmSync(partial, { force: true });
  const sqlite = new Database(source, { readonly: true, fileMustExist: true });
  let pages = 0;
  try {
    sqlite.pragma("busy_timeout = 5000");
    sqlite.exec("BEGIN");
    sqlite.prepare("SELECT count(*) FROM sqlite_master").get(); // the snapshot starts at the first read
    const done = await sqlite.backup(partial, {
      progress: ({ totalPages, remainingPages }) => {
        onProgress?.({ totalPages, donePages: totalPages - remainingPages });
        return PAGES_PER_STEP;
      },
    });
    pages = done.totalPages;
    sqlite.exec("COMMIT");
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    sqlite.close();
  }
  const copy = new Database(partial);
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
  const problems = integrityProblems(partial);
  if (problems.length > 0) {
    rmSync(partial, { force: true });
    throw new BackupError(`The copy failed its integrity check (${problems.join("; ")}); nothing was written to ${target}.`);
  }
  renameSync(partial, target);
  return { bytes: statSync(target).size, pages };
}

/** Whether a file is a Callboard warehouse (it has the migrations table and the users). */
function looksLikeWarehouse(file: string): boolean {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const names = new Set((sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    return names.has("__drizzle_migrations") && names.has("users") && names.has("apps");
  } finally {
    sqlite.close();
  }
}

export interface RestoreResult {
  /** Where the warehouse that was replaced now is (undefined: there was none). */
  previous?: string;
}

/**
 * Puts the backup `from` in place of the warehouse at `target`. Refused while any process
 * has `target` open (the server, a sync, the CLI): leaving WAL mode needs every other
 * connection gone, so a connection that switches the file to the rollback journal with no
 * busy wait proves that nothing else holds it, and keeps an exclusive lock while the files
 * are swapped. Unlike a pid file or a port probe it cannot go stale when a server is
 * killed, and it sees a server on any port. The replaced file is kept beside it.
 */
export function restoreWarehouse(from: string, target: string, nowMs = Date.now()): RestoreResult {
  if (!existsSync(from)) throw new BackupError(`There is no backup at ${from}.`);
  const problems = integrityProblems(from);
  if (problems.length > 0) throw new BackupError(`${from} fails its integrity check (${problems.join("; ")}): not restored.`);
  if (!looksLikeWarehouse(from)) throw new BackupError(`${from} is not a Callboard warehouse: not restored.`);
  const incoming = `${target}.restoring`;
  mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  copyFileSync(from, incoming);
  if (!existsSync(target)) {
    renameSync(incoming, target);
    return {};
  }
  const current = new Database(target, { fileMustExist: true });
  try {
    current.pragma("busy_timeout = 0");
    try {
      current.pragma("journal_mode = DELETE");
      current.pragma("locking_mode = EXCLUSIVE");
      current.exec("BEGIN EXCLUSIVE");
    } catch (error) {
      if (String((error as { code?: unknown }).code ?? "").startsWith("SQLITE_BUSY")) {
        throw new BackupError(`The warehouse ${target} is open in another process (the server, a sync or another command): stop it, then restore.`);
      }
      throw error;
    }
    const previous = `${target}.before-restore-${new Date(nowMs).toISOString().replace(/[:.]/g, "-")}`;
    renameSync(target, previous);
    renameSync(incoming, target);
    for (const side of ["-wal", "-shm", "-journal"]) rmSync(`${target}${side}`, { force: true });
    return { previous };
  } finally {
    rmSync(incoming, { force: true });
    if (current.inTransaction) current.exec("ROLLBACK");
    current.close();
  }
}

/**
 * Before migrations change a file that holds data (one that was migrated before), a copy
 * beside it: `<file>.before-<first pending migration>.bak`, with VACUUM INTO (one read
 * transaction: a consistent copy even when another process writes). Nothing happens when
 * no migration is pending, for a new file, or when one copy exists already (two processes
 * starting at once). Returns the copy's path when it made one.
 */
export function backupBeforeMigration(sqlite: Database.Database, migrationsFolder: string, announce?: (copy: string) => void): string | undefined {
  if (sqlite.memory || sqlite.readonly) return undefined;
  const hasTable = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!hasTable) return undefined;
  const last = sqlite.prepare("SELECT max(created_at) AS at FROM __drizzle_migrations").get() as { at: number | null };
  if (last.at === null) return undefined;
  const migrations = readMigrationFiles({ migrationsFolder });
  const pending = migrations.findIndex((m) => m.folderMillis > Number(last.at));
  if (pending === -1) return undefined;
  const tag = path.basename(migrationFileTag(migrationsFolder, pending));
  const copy = `${sqlite.name}.before-${tag}.bak`;
  if (existsSync(copy)) return undefined;
  announce?.(copy); // a large file takes a while: say why the start waits
  sqlite.prepare("VACUUM INTO ?").run(copy);
  return copy;
}

function migrationFileTag(migrationsFolder: string, index: number): string {
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: Array<{ tag: string }> };
  return journal.entries[index]?.tag ?? String(index);
}
