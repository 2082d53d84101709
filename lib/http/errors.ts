import { ZodError } from "zod";
import { currentRequestId } from "./request-id";

/**
 * One error hierarchy and one mapper for every route: a known error answers its
 * status with `{error: {code, message}}`; anything else is a 500 with no internals.
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
  onUnknown?.(error);
  const body: ErrorBody = { error: withRequestId({ code: "internal_error", message: "Something went wrong on our side." }) };
  return Response.json(body, { status: 500 });
}
