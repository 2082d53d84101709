import { ZodError } from "zod";
import { isPostgresUnavailable, POSTGRES_RETRY_AFTER_SECONDS } from "@/lib/postgres/unavailable";
import { currentRequestId } from "./request-id";

/**
 * One error hierarchy and one mapper for every route: a known error answers its
 * status with `{error: {code, message}}`; Postgres out of reach (several servers'
 * shared state, DATABASE_URL) is a 503 with Retry-After; anything else is a 500 with no
 * internals.
 */
/**
 * Route handlers run from Next's bundle while the custom server (and the analytics
 * worker's host) run the same file loaded by tsx: two copies of this module, two
 * HttpError classes. A brand in the global symbol registry makes `instanceof` hold
 * across both copies, so a 404 thrown by one is still a 404 when the other maps it.
 */
const HTTP_ERROR_BRAND = Symbol.for("callboard.HttpError");

export class HttpError extends Error {
  readonly [HTTP_ERROR_BRAND] = true;

  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[HTTP_ERROR_BRAND] === true;
  }

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new HttpError(400, "bad_request", message, details);
export const unauthorized = (message = "Sign in or send Authorization: Bearer <token>.") =>
  new HttpError(401, "unauthorized", message);
export const forbidden = (message = "This needs an admin.") => new HttpError(403, "forbidden", message);
export const notFound = (message = "Not found.") => new HttpError(404, "not_found", message);

export function zodToHttpError(error: ZodError): HttpError {
  const first = error.issues[0];
  const param = first?.path.join(".") || "request";
  const message = error.issues
    .map((i) => `${i.path.join(".") || "request"}: ${i.message}`)
    .join("; ");
  return new HttpError(400, "invalid_parameter", message, { parameter: param });
}

export interface ErrorBody {
  error: { code: string; message: string; [k: string]: unknown };
}

/** The request's id in an error body, so that a user's report of it can be found in the access log. */
export function withRequestId(error: ErrorBody["error"]): ErrorBody["error"] {
  const requestId = currentRequestId();
  return requestId === undefined ? error : { ...error, requestId };
}

export function toErrorResponse(error: unknown, onUnknown?: (e: unknown) => void): Response {
  const e = error instanceof ZodError ? zodToHttpError(error) : error;
  if (e instanceof HttpError) {
    const body: ErrorBody = { error: withRequestId({ code: e.code, message: e.message, ...(e.details ?? {}) }) };
    return Response.json(body, { status: e.status, headers: e.headers });
  }
  if (isPostgresUnavailable(error)) {
    // Not our bug and not the client's: the shared state store is down or restarting. The
    // answer says when to ask again and names nothing of the database (no host, no URL).
    const body: ErrorBody = { error: withRequestId({ code: "unavailable", message: "Callboard's database cannot be reached right now; try again shortly." }) };
    return Response.json(body, { status: 503, headers: { "Retry-After": String(POSTGRES_RETRY_AFTER_SECONDS) } });
  }
  onUnknown?.(error);
  const body: ErrorBody = { error: withRequestId({ code: "internal_error", message: "Something went wrong on our side." }) };
  return Response.json(body, { status: 500 });
}
