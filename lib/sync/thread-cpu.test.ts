import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { threadCpuMs } from "./thread-cpu";

describe.runIf(process.platform === "linux")("threadCpuMs", () => {
  it("counts this thread's CPU and not another thread's", async () => {
    // Work until this thread's own count has moved (a count that never moves times out).
    const t0 = threadCpuMs()!;
    let x = 0;
    while (threadCpuMs()! - t0 < 50) for (let i = 0; i < 1e5; i++) x += Math.sqrt(i + x);
    expect(x).toBeGreaterThan(0);

    // Another thread works for 200 ms of its own CPU while this one waits: this thread's
    // count moves far less (it only waits for the message).
    const worker = new Worker(
      `const { parentPort } = require("node:worker_threads");
       const { readFileSync } = require("node:fs");
       const cpu = () => { const s = readFileSync("/proc/thread-self/stat", "latin1"); const f = s.slice(s.lastIndexOf(")") + 2).split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
       const c0 = cpu(); let x = 0;
       while (cpu() - c0 < 200) for (let i = 0; i < 1e5; i++) x += Math.sqrt(i + x);
       parentPort.postMessage(cpu() - c0);`,
      { eval: true },
    );
    const waitStart = threadCpuMs()!;
    const workerMs = await new Promise<number>((resolve, reject) => worker.once("message", resolve).once("error", reject));
    const mineWhileWaiting = threadCpuMs()! - waitStart;
    await worker.terminate();
    expect(workerMs).toBeGreaterThanOrEqual(200);
    expect(mineWhileWaiting).toBeLessThan(100);
  });
});
