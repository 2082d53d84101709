import { spawn } from "node:child_process";

/**
 * Test support: runs a TypeScript fixture in a process of its own and SIGKILLs it as soon
 * as its output matches `at` (e.g. "page 4\n"), as a machine losing power would: no
 * handler, no cleanup. Resolves with what it printed once it is gone.
 */
export async function killMidRun(script: string, env: NodeJS.ProcessEnv, at: RegExp, timeoutMs = 30_000): Promise<{ out: string; err: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} never printed ${at}: ${out} ${err}`)), timeoutMs);
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (at.test(out)) {
          clearTimeout(timer);
          child.kill("SIGKILL");
          resolve();
        }
      });
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  }
  return { out, err };
}
