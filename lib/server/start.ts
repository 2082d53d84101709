/**
 * The one HTTP server: Next.js for pages and routes, the sync and alerts schedules beside it, one
 * process and one port. Used by `npm start`, `npm run dev`, the demo and the e2e
 * fixture. See docs/decisions/0001-custom-server.md. The webhook ingest fast path (a
 * lean node:http handler for POST /api/webhooks/{appId} in front of Next) and the lean
 * API path (token report requests and health, 0016) are wired here too, and in front of
 * every path: request ids, the access log and the HTTP metrics (observe.ts), the liveness
 * probe and /metrics (metrics-endpoint.ts; METRICS_PORT: a second server for /metrics).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import path from "node:path";
import next from "next";
import { closePostgresState, db, postgresStateDb, prepareState } from "@/db";
import { PEER_HEADER, trustedProxies } from "@/lib/auth/client-address";
import { ensureFirstAdmin } from "@/lib/auth/first-admin";
import { env } from "@/lib/config/env";
import { analyticsEngine } from "@/lib/analytics/engine";
import { clickHouseConfig, ensureClickHouseSchema } from "@/lib/clickhouse";
import { handleReport } from "@/lib/analytics/report-handler";
import { healthResponse } from "@/lib/health/health-response";
import { syncMaxAgeSeconds } from "@/lib/health/sync-age";
import { closeIngestor, createIngestHttpHandler, getIngestor } from "@/lib/ingest";
import { clickHouseForwardTarget, startClickHouseForwarder } from "@/lib/ingest/clickhouse-target";
import { PostgresForwarder } from "@/lib/ingest/postgres-forwarder";
import { clickhouse } from "@/lib/clickhouse/client";
import { processWriterV2 } from "@/lib/clickhouse/writer-v2";
import { logger } from "@/lib/log/logger";
import { normaliseBasePath, stripBasePath } from "@/lib/http/base-path";
import { startRetentionSchedule } from "@/lib/retention/prune";
import { registerWarehouseCollectors } from "@/lib/metrics/warehouse-collectors";
import { createApiFastPath } from "./api-fast-path";
import { createBodyGate } from "./body-gate";
import { answerWhenStateDown } from "./page-state-gate";
import { assertBuildServesBasePath } from "./build-info";
import { answerMalformedPath } from "./malformed-path";
import { applyHttpLimits, connectionsCheckingIntervalMs, type HttpLimits } from "./http-limits";
import { createMetricsServer, createOpsPaths } from "./metrics-endpoint";
import { observeRequest } from "./observe";
import { appRoutes, createRouteResolver } from "./route-template";

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

function pathOnly(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

export async function startServer(options: { dev?: boolean; port?: number; hostname?: string } = {}): Promise<RunningServer> {
  const config = env();
  const port = options.port ?? config.PORT;
  const dev = options.dev ?? false;
  const basePath = normaliseBasePath(config.BASE_PATH);
  if (!dev) assertBuildServesBasePath(basePath);
  // Migrations run before the first request: the SQLite file's, or with DATABASE_URL
  // Postgres's under its advisory lock (several servers starting at once take turns).
  const warehouse = await prepareState();
  // ClickHouse (when configured) is migrated now too; if it is down the server still
  // starts, and its first user migrates it (lib/clickhouse/ensure.ts).
  await ensureClickHouseSchema().catch((err: unknown) => logger.error({ err }, "ClickHouse schema not migrated at start"));
  await ensureFirstAdmin(warehouse);
  const app = next({ dev, dir: process.cwd(), hostname: options.hostname ?? "localhost", port });
  await app.prepare();
  const handle = app.getRequestHandler();
  // Webhook deliveries are answered before Next sees them (docs/decisions/0003-webhook-ingest.md).
  getIngestor();
  const ingest = createIngestHttpHandler(getIngestor);
  // Scripts' report requests (a token, no cookie) and health checks skip Next (0016).
  const api = createApiFastPath({ report: (request, name) => handleReport(request, name), health: () => healthResponse(db) });

  const limits: HttpLimits = {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    idleTimeoutMs: config.HTTP_IDLE_TIMEOUT_SECONDS * 1000,
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    // Only when configured: unset, a local proxy's X-Forwarded-For is believed but its connections stay capped as any client's.
    trustedProxies: config.TRUSTED_PROXIES === undefined ? undefined : trustedProxies(),
  };
  // Request ids, the access log and /metrics (0031); liveness at /api/health/live.
  registerWarehouseCollectors(db, { syncMaxAgeSeconds: syncMaxAgeSeconds(config) });
  const routeOf = createRouteResolver(appRoutes(path.join(process.cwd(), "app")));
  const ops = createOpsPaths({ metricsToken: config.METRICS_TOKEN, serveMetrics: config.METRICS_TOKEN !== undefined });
  // Bodies are refused from the request's head when they would be refused anyway (0036).
  const bodyGate = createBodyGate(db, (url) => stripBasePath(url, basePath));

  let overCap: (req: IncomingMessage) => boolean = () => false;
  const server = createServer({ connectionsCheckingInterval: connectionsCheckingIntervalMs(limits) }, (req, res) =>
    observeRequest(req, res, routeOf, () => {
      if (overCap(req)) return; // already answered 503 and closing
      if (answerMalformedPath(req, res)) return;
      // The lean paths know app paths; under BASE_PATH they answer only inside it, and Next gets the request as it came.
      const asked = req.url ?? "/";
      const appPath = stripBasePath(asked, basePath);
      if (appPath !== undefined) {
        req.url = appPath;
        if (ops(req, res)) return;
        if (ingest(req, res)) return;
        if (api(req, res)) return;
        req.url = asked;
      }
      // The sign-in throttle's client address: always the socket's, never the client's say.
      req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
      const pages = postgresStateDb();
      if (!pages || appPath === undefined) return bodyGate(req, res, () => void handle(req, res));
      // With the state in Postgres, a page is answered 503 + Retry-After while Postgres is down (page-state-gate.ts).
      void answerWhenStateDown(pages.$client, req, res, pathOnly(appPath)).then((answered) => {
        if (!answered) bodyGate(req, res, () => void handle(req, res));
      });
    }),
  );
  overCap = applyHttpLimits(server, limits);

  let stopScheduler: (() => void) | undefined;
  if (config.SYNC_INTERVAL_SECONDS > 0) {
    const { startSyncScheduler } = await import("@/lib/sync/scheduler");
    stopScheduler = startSyncScheduler(warehouse, { intervalSeconds: config.SYNC_INTERVAL_SECONDS }).stop;
  }
  const clickHouse = clickHouseConfig();
  const stopRetention = startRetentionSchedule(db, {
    auditDays: config.RETAIN_AUDIT_DAYS,
    syncRunsDays: config.RETAIN_SYNC_RUNS_DAYS,
    deliveriesDays: config.RETAIN_DELIVERIES_DAYS,
    clickHouse: clickHouse ? { config: clickHouse, keepMonths: config.RETAIN_CALLS_MONTHS } : undefined,
  });
  let stopAlerts: (() => Promise<void>) | undefined;
  if (config.ALERTS_INTERVAL_SECONDS > 0) {
    const { startAlertScheduler } = await import("@/lib/alerts/scheduler");
    stopAlerts = startAlertScheduler(warehouse, { intervalSeconds: config.ALERTS_INTERVAL_SECONDS }).stop;
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, options.hostname, () => resolve());
  });
  const url = `http://localhost:${port}`;
  logger.info({ port, dev, basePath }, `Callboard listening on ${url}${basePath}`);
  let metricsServer: Server | undefined;
  if (config.METRICS_PORT !== undefined) {
    const ms = createMetricsServer({ metricsToken: config.METRICS_TOKEN });
    await new Promise<void>((resolve, reject) => {
      ms.once("error", reject);
      ms.listen(config.METRICS_PORT, options.hostname, () => resolve());
    });
    metricsServer = ms;
    logger.info({ port: config.METRICS_PORT }, "Metrics on their own port: GET /metrics");
  }

  // ClickHouse mode: what the ingest stores in SQLite (or, with DATABASE_URL, in the
  // Postgres queue every server shares) is forwarded on in the background.
  const pgState = postgresStateDb();
  // Over Postgres the recordings' link flags are set under each app's Postgres sync lease.
  const forwarder = pgState
    ? new PostgresForwarder(pgState.$client, clickHouseForwardTarget(clickhouse(), { db: warehouse, writer: processWriterV2 })).start()
    : startClickHouseForwarder(warehouse);

  // The analytics engine gets ready now, not in the first report (the memory engine
  // loads its store on its worker thread, or in-process right after this tick).
  const analytics = analyticsEngine();
  await analytics.start();

  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        stopScheduler?.();
        stopRetention();
        void stopAlerts?.();
        void analytics.close();
        metricsServer?.close();
        server.close(() => {
          closeIngestor();
          // After the ingest's last commit: the batch in flight finishes, the rest waits in SQLite (or in the Postgres queue).
          void (forwarder?.stop() ?? Promise.resolve())
            .then(() => closePostgresState())
            .then(() => resolve());
        });
        server.closeAllConnections();
      }),
  };
}
