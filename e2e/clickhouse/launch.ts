/**
 * The web server of the ClickHouse e2e run (playwright.clickhouse.config.ts): a
 * clickhouse-server started by the test harness on loopback, then the demo in ClickHouse
 * mode (CLICKHOUSE_URL pointing at it): the sync writes calls there, webhooks are
 * forwarded there, and the pages read from there.
 *
 *   npx tsx e2e/clickhouse/launch.ts --port 3308 --dir .tmp/e2e-clickhouse
 */
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { startClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { restartable } from "@/lib/clickhouse/test-restart";

const opts = new Command("e2e-clickhouse")
  .requiredOption("--port <port>")
  .requiredOption("--dir <dir>")
  .parse(process.argv)
  .opts<{ port: string; dir: string }>();

// The servers' files live beside the demo's (removed by a clean stop, and at the next start).
const serversDir = `${path.resolve(opts.dir)}-clickhouse`;
rmSync(serversDir, { recursive: true, force: true });
mkdirSync(serversDir, { recursive: true });
const ch = await startClickHouse({ parentDir: serversDir });
// The outage spec (e2e/clickhouse/outage.spec.ts) takes ClickHouse down with SIGUSR2 and
// brings it back with SIGUSR1, on the same data; it finds this process by this file.
const server = restartable(ch, 0);
writeFileSync(path.join(serversDir, "launch.pid"), String(process.pid));
process.on("SIGUSR2", () => void server.down());
process.on("SIGUSR1", () => void server.up());
const demo = spawn(
  process.execPath,
  ["--import", "tsx", "scripts/demo.ts", "--port", opts.port, "--dir", opts.dir, "--fresh", "--no-build", "--size", "small"],
  { cwd: process.cwd(), env: { ...process.env, ...demoClickHouse(ch.env("callboard_e2e")) }, stdio: "inherit" },
);

/** The demo takes its scratch ClickHouse from DEMO_CLICKHOUSE_* (it ignores CLICKHOUSE_*: never a real one). */
function demoClickHouse(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [`DEMO_${k}`, v]));
}

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (demo.exitCode === null) {
      demo.kill("SIGTERM");
      await new Promise((r) => demo.once("exit", r));
    }
    await server.stop();
    await ch.stop();
    rmSync(serversDir, { recursive: true, force: true });
  }
  process.exit(code);
}
process.on("SIGTERM", () => void stop(0));
process.on("SIGINT", () => void stop(0));
demo.on("exit", (code) => void stop(code ?? 1));
