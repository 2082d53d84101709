import { spawn } from "node:child_process";
import path from "node:path";

/**
 * Test support: runs test-writer-v2-child.ts (one batch of v2 changes, or a link-flag
 * pass) in its own process with `env` added, and resolves with the signal it died of and
 * whatever it printed. The child SIGKILLs itself at KILL_STEP, so a test expects
 * `{ signal: "SIGKILL", out: "" }`: a child that finished, or failed first, prints.
 */
export async function runWriterChild(env: Record<string, string>): Promise<{ signal: NodeJS.Signals | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "test-writer-v2-child.ts")], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, sig) => resolve(sig)));
  return { signal, out };
}

/**
 * Waits until no INSERT runs on any of `servers` (each shard's own client): an insert the
 * killed child had fully sent still lands after its death. A real writer's successor starts
 * only once the dead writer's sync lease has lapsed (tens of seconds), long after that; a test
 * that completes at once must wait for it the same way, or races the dead writer's last insert.
 */
export async function insertsSettled(servers: ReadonlyArray<{ rows<T>(query: string): Promise<T[]> }>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(
      servers.map((s) => s.rows<{ n: string | number }>("SELECT count() AS n FROM system.processes WHERE lower(query) LIKE 'insert%'")),
    );
    if (counts.every(([r]) => Number(r?.n ?? 0) === 0)) return;
    if (Date.now() > deadline) throw new Error("inserts of the killed writer still running after 20 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}
