/**
 * The production server as a user runs it (`npm start` on the production build), started
 * by a benchmark on a warehouse file of its own: free port, health wait, stop.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** `next build` when there is no production build yet (the bench measures the production path). */
export function ensureProductionBuild(force = false): void {
  if (!force && existsSync(path.join(process.cwd(), ".next", "BUILD_ID"))) return;
  const r = spawnSync("npx", ["next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) throw new Error("next build failed");
}

export interface ProductionServer {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** `cwd`: the checkout (with its build) to run, by default this one (an A/B bench runs an earlier checkout beside it). */
export async function startProductionServer(env: Record<string, string>, timeoutMs = 600_000, cwd = process.cwd()): Promise<ProductionServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/server.ts"], {
    cwd,
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", AUTH_TRUST_HOST: "true", SYNC_INTERVAL_SECONDS: "0", LOG_LEVEL: "warn",
      // The bench measures the server, not the per-token limit that would cut its loops short.
      API_TOKEN_RATE_LIMIT_PER_MINUTE: "0", ...env, PORT: String(port) },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not answer within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, url, stop: () => stopChild(child) };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds (user + system) a process has used so far; undefined off Linux. */
export function childCpuSeconds(pid: number | undefined): number | undefined {
  try {
    // /proc/PID/stat: fields 14 and 15 (utime, stime) in clock ticks, after the ")" of the name.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
