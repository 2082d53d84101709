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
