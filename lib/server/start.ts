/**
 * The one HTTP server: Next.js for pages and routes, the sync and alerts schedules beside it, one
 * process and one port. Used by `npm start`, `npm run dev`, the demo and the e2e
 * fixture. See docs/decisions/0001-custom-server.md. The webhook ingest fast path (a
 * lean node:http handler for POST /api/webhooks/{appId} in front of Next) lives here too.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import next from "next";
import { db } from "@/db";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { ensureFirstAdmin } from "@/lib/auth/first-admin";
import { env } from "@/lib/config/env";
import { analyticsEngine } from "@/lib/analytics/engine";
import { closeIngestor, createIngestHttpHandler, getIngestor } from "@/lib/ingest";
import { logger } from "@/lib/log/logger";
import { applyHttpLimits, connectionsCheckingIntervalMs, type HttpLimits } from "./http-limits";

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startServer(options: { dev?: boolean; port?: number; hostname?: string } = {}): Promise<RunningServer> {
  const config = env();
  const port = options.port ?? config.PORT;
  const dev = options.dev ?? false;
  const warehouse = db(); // migrations run before the first request
  await ensureFirstAdmin(warehouse);
  const app = next({ dev, dir: process.cwd(), hostname: options.hostname ?? "localhost", port });
  await app.prepare();
  const handle = app.getRequestHandler();
  // Webhook deliveries are answered before Next sees them (docs/decisions/0003-webhook-ingest.md).
  getIngestor();
  const ingest = createIngestHttpHandler(getIngestor);

  const limits: HttpLimits = {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    idleTimeoutMs: config.HTTP_IDLE_TIMEOUT_SECONDS * 1000,
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
  };
  let overCap: (req: IncomingMessage) => boolean = () => false;
  const server = createServer({ connectionsCheckingInterval: connectionsCheckingIntervalMs(limits) }, (req, res) => {
    if (overCap(req)) return; // already answered 503 and closing
    if (ingest(req, res)) return;
    // The sign-in throttle's client address: always the socket's, never the client's say.
    req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
    void handle(req, res);
  });
  overCap = applyHttpLimits(server, limits);

  let stopScheduler: (() => void) | undefined;
  if (config.SYNC_INTERVAL_SECONDS > 0) {
    const { startSyncScheduler } = await import("@/lib/sync/scheduler");
    stopScheduler = startSyncScheduler(warehouse, { intervalSeconds: config.SYNC_INTERVAL_SECONDS }).stop;
  }
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
  logger.info({ port, dev }, `Callboard listening on ${url}`);

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
        void stopAlerts?.();
        void analytics.close();
        server.close(() => {
          closeIngestor();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
