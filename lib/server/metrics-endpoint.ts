import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { REQUEST_ID_HEADER } from "@/lib/http/request-id";
import { metrics } from "@/lib/metrics/registry";

/**
 * `GET /metrics` in the Prometheus text format (issue 27 item 2), and `GET
 * /api/health/live`, the liveness probe (item 5): answered by the server before the
 * webhook and API paths and before Next. /metrics is off on the main port unless
 * METRICS_TOKEN is set (then a scrape sends it as a bearer token), and METRICS_PORT
 * serves it on a port of its own (with the token too, when one is set).
 */
export interface OpsOptions {
  /** A scrape must send `Authorization: Bearer <token>` (when set). */
  metricsToken?: string;
  /** /metrics answers on this server (the main port needs a token; the metrics port does not). */
  serveMetrics: boolean;
}

const NO_STORE = { "Cache-Control": "no-store" };

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

function sameToken(given: string, expected: string): boolean {
  // Equal-length digests: the comparison's time says nothing about the token.
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...NO_STORE, ...headers });
  res.end(text);
}

function error(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>): void {
  const requestId = req.headers[REQUEST_ID_HEADER];
  json(res, status, { error: { code, message, ...(typeof requestId === "string" ? { requestId } : {}) } }, headers);
}

function serveMetrics(req: IncomingMessage, res: ServerResponse, options: OpsOptions): void {
  if (!options.serveMetrics) {
    error(req, res, 404, "not_found", "Metrics are off on this port: set METRICS_TOKEN (scrape with Authorization: Bearer <token>) or METRICS_PORT.");
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    error(req, res, 405, "method_not_allowed", "Scrape /metrics with GET.", { Allow: "GET, HEAD" });
    return;
  }
  if (options.metricsToken !== undefined) {
    const m = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    if (!m || !sameToken(m[1]!, options.metricsToken)) {
      error(req, res, 401, "unauthorized", "Send the METRICS_TOKEN as Authorization: Bearer <token>.", { "WWW-Authenticate": 'Bearer realm="callboard-metrics"' });
      return;
    }
  }
  const { registry } = metrics();
  registry
    .metrics()
    .then((text) => {
      res.writeHead(200, { "Content-Type": registry.contentType, "Content-Length": Buffer.byteLength(text), ...NO_STORE });
      res.end(req.method === "HEAD" ? undefined : text);
    })
    .catch(() => error(req, res, 500, "internal_error", "The metrics could not be collected."));
}

/** Returns false when the request is not for an ops path (the caller answers it). */
export function createOpsPaths(options: OpsOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = pathOf(req.url);
    if (path === "/api/health/live") {
      // Liveness: this process's event loop answers; nothing else is asked (not the warehouse, not ClickHouse).
      json(res, 200, { status: "ok" });
      return true;
    }
    if (path === "/metrics") {
      serveMetrics(req, res, options);
      return true;
    }
    return false;
  };
}

/** The METRICS_PORT server: /metrics only. */
export function createMetricsServer(options: Omit<OpsOptions, "serveMetrics">): Server {
  const ops = createOpsPaths({ ...options, serveMetrics: true });
  return createServer((req, res) => {
    if (pathOf(req.url) === "/metrics" && ops(req, res)) return;
    error(req, res, 404, "not_found", "This port serves GET /metrics only.");
  });
}
