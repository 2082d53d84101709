import type { IncomingMessage, ServerResponse } from "node:http";
import { SESSION_COOKIE } from "@/lib/auth/session-token";
import { REQUEST_ID_HEADER, requestIdFor } from "@/lib/http/request-id";
import { logger } from "@/lib/log/logger";
import { metrics } from "@/lib/metrics/registry";
import { runWithRequestId } from "./request-context";
import type { RouteResolver } from "./route-template";

/**
 * Every request the server takes, whoever answers it (the webhook and API lean paths,
 * the ops paths, Next): a request id (the caller's `X-Request-Id` when it is a plain
 * token, else a new UUID) echoed in the response header, kept for error bodies
 * (lib/http/request-id.ts), and one access-log line plus one histogram observation when
 * the answer is done (docs/decisions/0031-metrics-and-access-log.md). The line names the
 * route template, never the raw path or query, and never a header's value: no token, no
 * cookie, no session id.
 */
export type CallerKind = "webhook" | "token" | "session" | "anonymous";

const WEBHOOK_ROUTE = "/api/webhooks/[appId]";
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Who the request says it is (what it sends, not yet checked: the route decides). */
export function callerKind(req: Pick<IncomingMessage, "headers">, route: string): CallerKind {
  if (route === WEBHOOK_ROUTE) return "webhook";
  if (/^bearer\s/i.test(req.headers.authorization ?? "")) return "token";
  if (req.headers.cookie?.includes(SESSION_COOKIE)) return "session";
  return "anonymous";
}

type Observer = { observe(seconds: number): void };
/** The histogram's series by method, route and status (bounded sets): prom-client hashes labels on every plain observe. */
const series = new Map<string, Observer>();

function seriesOf(method: string, route: string, status: string): Observer {
  const key = `${method} ${route} ${status}`;
  let s = series.get(key);
  if (!s) series.set(key, (s = metrics().httpRequestDuration.labels({ method, route, status })));
  return s;
}

export function observeRequest(req: IncomingMessage, res: ServerResponse, routeOf: RouteResolver, answer: () => void): void {
  const started = process.hrtime.bigint();
  const requestId = requestIdFor(req.headers[REQUEST_ID_HEADER]);
  // Next's routes and the proxy read it from the request as well.
  req.headers[REQUEST_ID_HEADER] = requestId;
  res.setHeader("X-Request-Id", requestId);
  const route = routeOf(req.url);
  const method = METHODS.has(req.method ?? "") ? req.method! : "OTHER";
  res.once("close", () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const status = res.headersSent ? res.statusCode : 0; // 0: the client left before any answer
    seriesOf(method, route, String(status)).observe(seconds);
    logger.info(
      {
        requestId, method, route, status, durationMs: Math.round(seconds * 10_000) / 10,
        caller: callerKind(req, route), ...(res.writableFinished ? {} : { aborted: true }),
      },
      "request",
    );
  });
  runWithRequestId(requestId, answer);
}
