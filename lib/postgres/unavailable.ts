/**
 * Whether an error means Postgres could not be reached or is going away — as opposed to
 * a query it refused. A request that meets one is answered 503 with Retry-After (the
 * state store is down for a moment: try again), never 500 (lib/http/errors.ts). Drizzle
 * wraps the driver's error (DrizzleQueryError, the driver's in `cause`), so the chain is
 * walked.
 */

/** Node's network failures: refused, reset, unreachable, timed out. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/** SQLSTATEs of a server that is unreachable, shutting down, starting, or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** node-postgres's own words when it has no connection to give (it sets no code for these). */
const DRIVER_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /is not queryable/, /^Client was closed and is not queryable/];

export function isPostgresUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === "object" && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08"))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && DRIVER_MESSAGES.some((m) => m.test(message))) return true;
    // A connection to a list of addresses that all failed (Node's happy eyeballs).
    if (e instanceof AggregateError && e.errors.some((inner) => isPostgresUnavailable(inner))) return true;
  }
  return false;
}

/** Seconds a client waits before asking again while Postgres cannot be reached (the webhook inbox answers the same). */
export const POSTGRES_RETRY_AFTER_SECONDS = 2;
