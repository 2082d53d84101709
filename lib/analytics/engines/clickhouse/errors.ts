import { ClickHouseError } from "@/lib/clickhouse";
import { HttpError } from "@/lib/http/errors";

/**
 * ClickHouse's error codes that mean "not reachable now" rather than "this query is
 * wrong": a timeout, a network or socket error, a shard of the cluster that did not
 * answer. (A code from Node's network stack, ECONNREFUSED and the like, means the same.)
 */
const UNAVAILABLE_CODES = new Set(["159", "160", "209", "210", "279", "425"]);

/** Seconds a client is told to wait before asking again. */
const RETRY_AFTER_SECONDS = 5;

/** Whether an error says that ClickHouse could not be reached (as opposed to refusing a query). */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof ClickHouseError)) return false;
  return err.code === undefined || !/^\d+$/.test(err.code) || UNAVAILABLE_CODES.has(err.code);
}

/**
 * A report asked while ClickHouse cannot be reached answers 503 with Retry-After and a
 * message that names no address (the routes' mapper sends an HttpError as it is);
 * anything else is passed on unchanged (a 404 stays a 404, a query bug a 500).
 */
export function unavailableAsHttp(err: unknown): unknown {
  if (!isUnavailable(err)) return err;
  return new HttpError(
    503,
    "analytics_unavailable",
    "The analytics warehouse (ClickHouse) cannot be reached right now; try again shortly.",
    undefined,
    { "Retry-After": String(RETRY_AFTER_SECONDS) },
  );
}
