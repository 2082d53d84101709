/**
 * `npm start` (and `npm run dev`): one process, one port. Next.js serves the pages and
 * routes; the sync schedule runs beside it. See docs/decisions/0001-custom-server.md.
 */
import { createServer } from "node:http";
import next from "next";
import { loadDotEnv, env } from "@/lib/config/env";
import { db } from "@/db";
import { logger } from "@/lib/log/logger";

loadDotEnv();
const dev = process.argv.includes("--dev");
(process.env as Record<string, string | undefined>).NODE_ENV ??= dev ? "development" : "production";

async function main(): Promise<void> {
  const config = env();
  const warehouse = db(); // migrate before the first request
  const app = next({ dev, dir: process.cwd(), hostname: "localhost", port: config.PORT });
  await app.prepare();
  const handle = app.getRequestHandler();

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  server.keepAliveTimeout = 65_000;

  let stopScheduler: (() => void) | undefined;
  if (config.SYNC_INTERVAL_SECONDS > 0) {
    const { startSyncScheduler } = await import("@/lib/sync/scheduler");
    stopScheduler = startSyncScheduler(warehouse, { intervalSeconds: config.SYNC_INTERVAL_SECONDS }).stop;
  }

  server.listen(config.PORT, () => {
    logger.info({ port: config.PORT, dev }, `Callboard listening on http://localhost:${config.PORT}`);
  });

  const shutdown = () => {
    stopScheduler?.();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
