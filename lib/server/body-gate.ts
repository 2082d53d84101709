import type { IncomingMessage, ServerResponse } from "node:http";
import type { Db } from "@/db/client";
import { authorizeRequest, callerForSession } from "@/lib/auth/authorize";
import { isOpenPath } from "@/lib/auth/open-paths";
import { readSessionClaims } from "@/lib/auth/session-token";
import { HttpError, unauthorized } from "@/lib/http/errors";
import { MAX_JSON_BODY_BYTES } from "@/lib/http/json-body";
import { logger } from "@/lib/log/logger";
import { isPostgresUnavailable, POSTGRES_RETRY_AFTER_SECONDS } from "@/lib/postgres/unavailable";
import { sendJsonError } from "./json-answer";

/**
 * The body gate (docs/decisions/0036-hostile-requests-and-upstreams.md): a request that carries a body is
 * answered from its head alone, before a byte of the body is read, when
 * - it declares a body larger than MAX_JSON_BODY_BYTES: 413;
 * - it has no valid credentials (on any path but the open ones: sign-in, next-auth,
 *   webhooks, health): 401;
 * - it is a write to the API by a caller who is not an admin (every write under /api/v1
 *   is admin-only): 403; a cookie write from another site: 403 as well.
 * Next reads a request's whole body before its proxy (middleware) or a route runs, so
 * without this gate an unauthenticated stream was read to its end (727 MB in 31 s) before
 * the 401. A body without a declared length that passes is counted as it arrives and cut
 * at the cap (413).
 */
const TOO_LARGE_MESSAGE = `The request body is larger than ${MAX_JSON_BODY_BYTES.toLocaleString("en-US")} bytes, the most a JSON body may be.`;
const TOO_LARGE = { status: 413, code: "payload_too_large", message: TOO_LARGE_MESSAGE };

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function carriesBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > 0;
  return req.headers["transfer-encoding"] !== undefined;
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(key, v);
  }
  return headers;
}

export type Refusal = { status: number; code: string; message: string; headers?: Record<string, string> } | null;

/**
 * Why a request with a body is refused before its body is read; null: hand it on. `url`:
 * the request's path inside the app (BASE_PATH taken off), which decides the route.
 */
export async function bodyRefusal(db: Db, req: IncomingMessage, url = req.url ?? "/"): Promise<Refusal> {
  const path = pathOf(url);
  const tooLarge = Number(req.headers["content-length"] ?? 0) > MAX_JSON_BODY_BYTES ? TOO_LARGE : null;
  if (isOpenPath(path)) return tooLarge;
  const headers = headersOf(req);
  try {
    // Who asks comes first: a stranger learns nothing about the route, not even its size limit.
    if (path === "/api" || path.startsWith("/api/")) {
      // Any method but GET and HEAD is a write (asked as POST: Request refuses some methods, such as TRACE, outright).
      const isWrite = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(new URL(url, "http://callboard.invalid"), { method: isWrite ? "POST" : req.method, headers });
      const caller = await authorizeRequest(db, request);
      if (isWrite && caller.role !== "admin") return { status: 403, code: "forbidden", message: "This needs an admin." };
      return tooLarge;
    }
    // A page's server action: the session is checked here, the rest by the action itself.
    const claims = await readSessionClaims(headers);
    if (!claims || !(await callerForSession(db, claims))) throw unauthorized();
    return tooLarge;
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, code: error.code, message: error.message };
    // The state store (Postgres, DATABASE_URL) down or restarting: ask again soon, as every route answers (lib/http/errors.ts).
    if (isPostgresUnavailable(error)) {
      return { status: 503, code: "unavailable", message: "Callboard's database cannot be reached right now; try again shortly.", headers: { "retry-after": String(POSTGRES_RETRY_AFTER_SECONDS) } };
    }
    logger.error({ err: error instanceof Error ? { name: error.name, message: error.message } : String(error) }, "body gate failed");
    return { status: 500, code: "internal_error", message: "Something went wrong on our side." };
  }
}

/**
 * Counts a body that passed the gate as Next reads it ('data' events: Next's body
 * cloning listens to them) and, past the cap, answers 413 and stops the stream: a body
 * without a declared length cannot be refused from the head.
 */
function capStreamedBody(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers["content-length"] !== undefined) return; // declared, and already checked
  let size = 0;
  let cut = false;
  const emit = req.emit.bind(req) as (event: string | symbol, ...args: unknown[]) => boolean;
  req.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event === "data") {
      if (cut) return false;
      size += (args[0] as Buffer).length;
      if (size > MAX_JSON_BODY_BYTES) {
        cut = true;
        sendJsonError(req, res, 413, TOO_LARGE.code, TOO_LARGE_MESSAGE);
        return false;
      }
    }
    return emit(event, ...args);
  }) as typeof req.emit;
}

/**
 * In front of Next: `next()` hands the request on; a refused one is answered here. A
 * request without a body goes on at once (Next's proxy and routes answer it as before).
 */
export function createBodyGate(
  db: () => Db,
  appPathOf: (url: string) => string | undefined = (url) => url,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    if (!carriesBody(req)) return next();
    // Outside BASE_PATH nothing of the app answers (Next's 404): nothing to judge.
    const appPath = appPathOf(req.url ?? "/");
    if (appPath === undefined) return next();
    void bodyRefusal(db(), req, appPath).then((refusal) => {
      if (refusal) return sendJsonError(req, res, refusal.status, refusal.code, refusal.message, refusal.headers);
      capStreamedBody(req, res);
      next();
    });
  };
}
