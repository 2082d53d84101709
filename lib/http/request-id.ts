/**
 * The id of the request being answered, for error bodies (`{error: {code, message,
 * requestId}}`) and log lines: the same id the server echoes in `X-Request-Id` and writes
 * in the access log, so that a user's report can be found in the log. The server
 * (lib/server/request-context.ts) keeps it in an AsyncLocalStorage under a global symbol,
 * so that this file needs no Node import and the copy of it in Next's bundle reads the
 * same store as the server's.
 */
export const REQUEST_ID_HEADER = "x-request-id";
export const REQUEST_CONTEXT_KEY = Symbol.for("callboard.requestContext");

export interface RequestContext {
  requestId: string;
}

interface ContextStore {
  getStore(): RequestContext | undefined;
}

/** The current request's id, or undefined outside a request (scripts, schedules). */
export function currentRequestId(): string | undefined {
  return (globalThis as { [REQUEST_CONTEXT_KEY]?: ContextStore })[REQUEST_CONTEXT_KEY]?.getStore()?.requestId;
}

/** A caller's own id is kept when it is a plain token (a proxy's, a client's); anything else gets a new one. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === "string" && ACCEPTED_ID.test(incoming) ? incoming : crypto.randomUUID();
}
