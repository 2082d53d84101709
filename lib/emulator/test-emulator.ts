// spawnEmulator(): runs scripts/emulator.ts as a child process (the way integration tests
// of the sync should use it: a real separate server over real HTTP), parses its JSON
// line, and guarantees the child is killed.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createAdminClient, type EmulatorAdmin } from "./admin-client";
import type { SessionIdOrder } from "./session-ids";
import type { Region } from "./types";

export interface SpawnOptions {
  seed?: number;
  /** Apps as specs or as the CLI's "id:count[:region],..." text. */
  apps?: { appId: string; count: number; region?: Region }[] | string;
  months?: number;
  /** End of the generated history, epoch seconds. Pass it for fully deterministic data. */
  now?: number;
  /** Default 0 (any free port). */
  port?: number;
  ignorePerPage?: number;
  invalidRecords?: boolean;
  order?: "newest" | "oldest" | "shuffled";
  /** Session ids that follow time (default) or random UUIDs (session-ids.ts). */
  sessionIds?: SessionIdOrder;
  /** CLI fault specs, e.g. ["503:0.2:list", "truncate:every5:list"]. */
  faults?: string[];
  faultSeed?: number;
  rateLimitPerMinute?: number;
  managementKey?: string;
  managementSecret?: string;
  /** Give up if the emulator is not listening after this long (default 60 s). */
  timeoutMs?: number;
}

export interface SpawnedApp {
  appId: string;
  apiKey: string;
  region: Region;
  calls: number;
  callsUrl: string;
}

export interface SpawnedEmulator {
  url: string;
  apps: SpawnedApp[];
  management: { url: string; key: string; secret: string };
  admin: EmulatorAdmin;
  pid: number;
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export function cliArgs(o: SpawnOptions): string[] {
  const args = ["--port", String(o.port ?? 0)];
  const add = (flag: string, v: string | number | undefined) => {
    if (v !== undefined) args.push(flag, String(v));
  };
  add("--seed", o.seed);
  add("--apps", typeof o.apps === "string" ? o.apps : o.apps?.map((a) => `${a.appId}:${a.count}:${a.region ?? "us"}`).join(","));
  add("--months", o.months);
  add("--now", o.now);
  add("--ignore-per-page", o.ignorePerPage);
  if (o.invalidRecords) args.push("--invalid-records");
  add("--order", o.order);
  add("--session-ids", o.sessionIds);
  for (const f of o.faults ?? []) args.push("--fault", f);
  add("--fault-seed", o.faultSeed);
  add("--rate-limit", o.rateLimitPerMinute);
  add("--management-key", o.managementKey);
  add("--management-secret", o.managementSecret);
  return args;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort: a test runner that exits without calling stop() must not leak servers.
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

export async function spawnEmulator(o: SpawnOptions = {}): Promise<SpawnedEmulator> {
  installExitHook();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/emulator.ts", ...cliArgs(o)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  live.add(child);
  child.once("exit", () => live.delete(child));
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const stop = async (): Promise<void> => {
    if (!(await waitExit(child, 0))) {
      child.kill("SIGTERM");
      if (!(await waitExit(child, 5000))) {
        child.kill("SIGKILL");
        await waitExit(child, 5000);
      }
    }
    live.delete(child);
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`emulator did not start within ${o.timeoutMs ?? 60_000} ms; stderr: ${stderr}`)), o.timeoutMs ?? 60_000);
      child.stdout?.on("data", (b: Buffer) => {
        out += b.toString();
        const nl = out.indexOf("\n");
        if (nl >= 0) {
          clearTimeout(timer);
          resolve(out.slice(0, nl));
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`emulator exited with ${code} before listening; stderr: ${stderr}`));
      });
      child.once("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const info = JSON.parse(line) as Omit<SpawnedEmulator, "admin" | "pid" | "stop">;
    return { ...info, admin: createAdminClient(info.url), pid: child.pid ?? -1, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
