/**
 * Whether the warehouse takes writes right now, as the writers saw it: the webhook
 * ingest reports every batch it could or could not commit, and /api/health says 503
 * with the reason while writes fail (lib/health/health.ts).
 *
 * One record per process, on `globalThis` under a registry symbol: the route handlers
 * run from Next's bundle and the ingest from the custom server's copy of this module
 * (the same reason lib/http/errors.ts brands HttpError).
 */
export type WriteFailureReason = "disk_full" | "locked" | "io_error" | "read_only" | "unknown";

export interface WriteFailure {
  reason: WriteFailureReason;
  /** For people: what failed and what to do, no internals beyond the SQLite code. */
  message: string;
  /** When writes started failing (epoch ms), and the latest failure. */
  sinceMs: number;
  lastMs: number;
}

interface WriteState {
  failure: WriteFailure | null;
  lastSuccessMs: number;
}

const STATE = Symbol.for("callboard.writeState");
const holder = globalThis as unknown as { [STATE]?: WriteState };

function state(): WriteState {
  holder[STATE] ??= { failure: null, lastSuccessMs: 0 };
  return holder[STATE];
}

const MESSAGES: Record<WriteFailureReason, string> = {
  disk_full: "The disk holding the database is full: writes fail until space is freed.",
  locked: "Another process has held the database's write lock past the busy timeout (a backup or a long sqlite3 session?): writes fail until it lets go.",
  io_error: "The database file could not be written (I/O error).",
  read_only: "The database file is read-only for this process.",
  unknown: "Writes to the database fail.",
};

/** The SQLite (or file system) code of an error, when it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Which failures mean "the store cannot take writes now" (retry later) rather than
 * "this data is wrong": disk full, lock held past the busy timeout, I/O errors.
 */
export function writeFailureReason(error: unknown): WriteFailureReason | null {
  const code = errorCode(error) ?? "";
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT") return "disk_full";
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "locked";
  if (code.startsWith("SQLITE_IOERR") || code === "EIO") return "io_error";
  if (code.startsWith("SQLITE_READONLY") || code === "EROFS") return "read_only";
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_PROTOCOL") return "unknown";
  return null;
}

/** Notes a write that failed with `reason`; returns the current failure. */
export function noteWriteFailure(reason: WriteFailureReason, nowMs = Date.now()): WriteFailure {
  const s = state();
  const since = s.failure && s.failure.reason === reason ? s.failure.sinceMs : nowMs;
  s.failure = { reason, message: MESSAGES[reason], sinceMs: since, lastMs: nowMs };
  return s.failure;
}

export function noteWriteSuccess(nowMs = Date.now()): void {
  const s = state();
  s.failure = null;
  s.lastSuccessMs = nowMs;
}

/** The failure seen since the last successful write, if any. */
export function currentWriteFailure(): WriteFailure | null {
  return state().failure;
}

export function describeWriteFailure(reason: WriteFailureReason): string {
  return MESSAGES[reason];
}

/** Tests: forget what was seen. */
export function resetWriteStateForTests(): void {
  holder[STATE] = { failure: null, lastSuccessMs: 0 };
}
