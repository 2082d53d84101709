/**
 * Test support: the production server (`npm start`: scripts/server.ts on the `next
 * build` output) as a child process on a free loopback port, with its own warehouse.
 * Needs a build: `npm test` builds before the unit tests, so in CI (CI=true) a missing
 * build fails the suites that use this; elsewhere they skip themselves.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";

const ROOT = process.cwd();
export const BUILT = existsSync(path.join(ROOT, ".next", "BUILD_ID"));
export const MUST_RUN = process.env.CI === "true";
/** For `describe.skipIf`: no build here and not in CI. */
export const SKIP_WITHOUT_BUILD = !BUILT && !MUST_RUN;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

export interface TestServer {
  base: string;
  port: number;
  child: ChildProcess;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** What it wrote to stdout so far (its log lines), when started with `stdout: true`. */
  stdout(): string;
  stop(): Promise<void>;
}

export interface TestServerOptions {
  /** Environment on top of the defaults (production, no schedule, warn-level logs). */
  env: Record<string, string>;
  port?: number;
  /**
   * Wraps the command, e.g. `["unshare", "-rm", "sh", "-c", 'mount … && exec "$0" "$@"']`:
   * the server's command line is appended.
   */
  wrap?: string[];
  /** Keep what the server writes to stdout (its pino log); ignored otherwise. */
  stdout?: boolean;
  /**
   * Run the server as `node --import tsx scripts/server.ts`: the child is the server itself
   * (tsx's own command starts it as a grandchild), so SIGKILL reaches the server.
   */
  nodeImport?: boolean;
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const port = options.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const command = options.nodeImport ? [process.execPath, "--import", "tsx", "scripts/server.ts"] : [path.join(ROOT, "node_modules", ".bin", "tsx"), "scripts/server.ts"];
  const argv = [...(options.wrap ?? []), ...command];
  const child = spawn(argv[0], argv.slice(1), {
    cwd: ROOT,
    env: {
      ...process.env, NODE_ENV: "production", AUTH_TRUST_HOST: "true", SYNC_INTERVAL_SECONDS: "0", LOG_LEVEL: "warn",
      NEXT_TELEMETRY_DISABLED: "1", ...options.env, PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout?.on("data", (c: Buffer) => {
    // The last 1 MB is plenty for a test to look for its log line, and bounds what a chatty server costs.
    stdout = (stdout + c.toString()).slice(-1_000_000);
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const hard = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(hard);
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr.slice(0, 800)}`);
    try {
      await fetch(`${base}/api/health`);
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`server did not start within 90 s: ${stderr.slice(0, 800)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { base, port, child, stderr: () => stderr, stdout: () => stdout, stop };
}
