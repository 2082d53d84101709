import { defineConfig, devices } from "@playwright/test";
import base from "./playwright.config";

/**
 * The same product in ClickHouse mode: the web server (e2e/clickhouse/launch.ts) starts a
 * clickhouse-server with the test harness and runs the demo with CLICKHOUSE_URL pointing
 * at it. Its own port and scratch folder, so it can run beside the SQLite-mode config.
 *
 *   npx playwright test -c playwright.clickhouse.config.ts
 */
const PORT = Number(process.env.E2E_CLICKHOUSE_PORT ?? Number(process.env.E2E_PORT ?? 3100) + 1);
// The fixtures (e2e/fixture.ts, e2e/storage.ts) read E2E_DIR; workers inherit it from here.
process.env.E2E_DIR = process.env.E2E_CLICKHOUSE_DIR ?? ".tmp/e2e-clickhouse";

export default defineConfig({
  ...base,
  outputDir: "test-results/clickhouse",
  use: { ...base.use, baseURL: `http://localhost:${PORT}` },
  projects: [
    { name: "setup", testMatch: /auth\.setup\.ts/, use: { ...devices["Desktop Chrome"] } },
    { name: "clickhouse", testMatch: /clickhouse\/.*\.spec\.ts/, use: { ...devices["Desktop Chrome"] }, dependencies: ["setup"] },
  ],
  webServer: {
    command: `npx tsx e2e/clickhouse/launch.ts --port ${PORT} --dir ${process.env.E2E_DIR}`,
    url: `http://localhost:${PORT}/api/health`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 20_000 },
  },
});
