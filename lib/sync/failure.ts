import { PlatformError } from "@/lib/platform/errors";
import { UpstreamNotConvergingError } from "./convergence";

/**
 * What a user reads when a sync fails: the app, what went wrong in words, and what
 * happens next. Warehouse failures (a full disk, a lock held past the busy timeout) get
 * their own words: SQLite's own ("database or disk is full", "database is locked") do
 * not say whose lock or what to do.
 */

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The SQLite error inside `err`: better-sqlite3's own, one relayed by the write worker, or
 * the cause of drizzle's wrapper (an awaited drizzle query throws DrizzleQueryError with
 * better-sqlite3's error as its cause).
 */
function sqliteErrorOf(err: unknown): { code: string; message: string } | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_")) return { code, message: errorText(e) };
  }
  return undefined;
}

/** SQLite's result code of a warehouse error. */
export function sqliteCode(err: unknown): string | undefined {
  return sqliteErrorOf(err)?.code;
}

/** The warehouse itself failed: nothing more is written in this run. */
export function isWarehouseFailure(err: unknown): boolean {
  return sqliteCode(err) !== undefined;
}

export function describeWarehouseError(err: unknown): string {
  const inner = sqliteErrorOf(err);
  const code = inner?.code ?? "SQLITE_ERROR";
  const raw = `${code}: ${inner?.message ?? errorText(err)}`;
  if (code === "SQLITE_FULL") return `the warehouse's disk is full (${raw}); free space, then sync again`;
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return `the warehouse stayed locked by another connection for longer than the busy timeout (${raw}); sync again once that writer (a backup, a sqlite3 session) is done`;
  }
  if (code.startsWith("SQLITE_IOERR")) return `the warehouse could not be written (${raw}); check its disk`;
  return `the warehouse refused the write (${raw})`;
}

/** `resumeAt`: the page the next run continues from, when it will. */
export function describeSyncFailure(appId: string, err: unknown, resumeAt: number | null): string {
  const next = resumeAt === null ? "" : ` The next run resumes at page ${resumeAt.toLocaleString("en")}.`;
  if (err instanceof UpstreamNotConvergingError) return `${err.message}${next}`;
  if (err instanceof PlatformError) return `${err.message}${next}`;
  if (isWarehouseFailure(err)) return `sync of app ${appId} failed: ${describeWarehouseError(err)}. The calls stored before are kept.${next}`;
  return `sync of app ${appId} failed: ${errorText(err)}${next ? ` ${next.trim()}` : ""}`;
}
