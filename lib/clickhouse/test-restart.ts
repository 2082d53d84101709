import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { clickHouseServerBinary, stopProcess, type TestClickHouse } from "./test-clickhouse";

/**
 * Test support beside the harness (test-clickhouse.ts): takes one of its servers down and brings
 * it back on the same directory, ports and data, as an operator restarting ClickHouse
 * would. What the live-path suites need to show that nothing acknowledged while
 * ClickHouse was away is lost.
 */
export interface RestartableServer {
  /** Stops the server (SIGTERM, as a service stop would). */
  down(): Promise<void>;
  /** Starts it again and waits until it answers. */
  up(): Promise<void>;
  /** Stops a server started by `up` (call before the harness's own stop). */
  stop(): Promise<void>;
}

async function waitForPing(host: string, port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`http://${host}:${port}/ping`, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    if (child.exitCode !== null) throw new Error(`clickhouse-server on ${host}:${port} exited (${child.exitCode}) while restarting`);
    if (Date.now() > deadline) throw new Error(`clickhouse-server on ${host}:${port} did not answer after a restart`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export function restartable(ch: TestClickHouse, index: number): RestartableServer {
  const s = ch.servers[index];
  let current: ChildProcess | undefined;
  return {
    down: async () => {
      if (current) await stopProcess(current);
      else await ch.kill(index);
      current = undefined;
    },
    up: async () => {
      const bin = clickHouseServerBinary();
      if (!bin) throw new Error("clickhouse-server is not installed");
      const child = spawn(bin, [`--config-file=${path.join(s.dir, "config.xml")}`], { cwd: s.dir, stdio: "ignore" });
      current = child;
      // Never left behind by a test process that ends without stopping it.
      const kill = () => child.kill("SIGKILL");
      process.once("exit", kill);
      child.once("exit", () => process.off("exit", kill));
      await waitForPing(s.host, s.httpPort, child, 60_000);
    },
    stop: async () => {
      if (current) await stopProcess(current);
    },
  };
}
