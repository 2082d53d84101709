/**
 * The webhook kill test: the production server under webhook load is killed with
 * SIGKILL at a random moment, restarted on the same warehouse, and killed again, for
 * a number of rounds; then every delivery answered 200 must be in the warehouse, and
 * none counted twice. Prints acknowledged / stored / lost / duplicated.
 *
 *   npx tsx bench/webhooks.ts --kill [rounds]      npm run bench -- --only webhook-kill
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import Database from "better-sqlite3";
import type { BenchRow } from "./bench-row";
import { bodyFactory, freePort, load, prepareBenchWarehouse, waitForHttp, type LoadStats } from "./webhooks";

export interface WebhookKillOptions {
  /** Kill-and-restart rounds (default 5). */
  rounds?: number;
  /** Seconds of load per round; the kill falls in its middle third (default 6). */
  secondsPerRound?: number;
  connections?: number;
}

const RUN = "kill";
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/** The server in a process group of its own, so that SIGKILL reaches the node process tsx starts too. */
function startServer(tsx: string, env: NodeJS.ProcessEnv, port: number): ChildProcess {
  return spawn(tsx, ["scripts/server.ts"], { cwd: process.cwd(), env: { ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"], detached: true });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  killGroup(child, "SIGTERM");
  const hard = setTimeout(() => killGroup(child, "SIGKILL"), 10_000);
  await exited;
  clearTimeout(hard);
}

export async function runWebhookKillBench(options: WebhookKillOptions = {}): Promise<BenchRow[]> {
  const rounds = options.rounds ?? 5;
  const seconds = options.secondsPerRound ?? 6;
  const connections = options.connections ?? 32;
  const wh = await prepareBenchWarehouse({ prefix: "callboard-webhook-kill-" });
  const next = bodyFactory(RUN, 0.05);
  const answered = new Set<string>();
  let acknowledged = 0;
  let server: ChildProcess | undefined;
  try {
    for (let round = 1; round <= rounds; round++) {
      const port = await freePort();
      server = startServer(wh.tsx, wh.childEnv, port);
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(`${url}/api/health`, server);
      const killAfterMs = Math.round(((1 + Math.random()) * seconds * 1000) / 3);
      const victim = server;
      const timer = setTimeout(() => killGroup(victim, "SIGKILL"), killAfterMs);
      const stats: LoadStats = await load(url, wh.auth, seconds, connections, next);
      clearTimeout(timer);
      await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r(null) : victim.once("exit", r)));
      acknowledged += stats.answered200;
      for (const id of stats.answeredIds) answered.add(id);
      console.log(`webhook kill: round ${round}/${rounds}: ${fmt(stats.answered200)} answered 200, killed after ${(killAfterMs / 1000).toFixed(1)} s`);
    }
    // Recovery: the warehouse opens and migrates after the last kill, and shuts down cleanly.
    const port = await freePort();
    server = startServer(wh.tsx, wh.childEnv, port);
    await waitForHttp(`http://127.0.0.1:${port}/api/health`, server);
    const health = await (await fetch(`http://127.0.0.1:${port}/api/health`)).json() as { status: string };
    await stopGracefully(server);

    const proof = countDeliveries(wh.file, answered);
    const ok = proof.lost === 0 && proof.duplicated === 0 && proof.integrity === "ok" && health.status === "ok";
    return [
      {
        area: "webhooks", metric: `kill test: ${rounds} × SIGKILL under load (${connections} conns), restart on the same warehouse`,
        target: "lost 0, duplicated 0",
        measured: `acknowledged ${fmt(acknowledged)} (${fmt(answered.size)} distinct deliveries), stored ${fmt(proof.storedAcknowledged)} of them (+${fmt(proof.storedUnanswered)} stored but never answered 200), lost ${fmt(proof.lost)}, duplicated ${fmt(proof.duplicated)}; integrity ${proof.integrity}; health after restart ${health.status}`,
        ok,
      },
    ];
  } finally {
    if (server) killGroup(server, "SIGKILL");
    rmSync(wh.dir, { recursive: true, force: true });
  }
}

/**
 * What the warehouse holds of the run: every delivery answered 200 must be there (lost
 * counts those that are not); a delivery stored twice or counted twice is duplicated
 * (the unique key makes the first impossible; the second would be a count applied twice).
 */
function countDeliveries(file: string, answered: Set<string>) {
  const sqlite = new Database(file, { readonly: true });
  try {
    const rows = sqlite.prepare<[], { id: string; n: number }>(
      `SELECT json_extract(body, '$.benchId') id, count(*) n FROM webhook_deliveries WHERE json_extract(body, '$.benchRun') = '${RUN}' GROUP BY 1`,
    ).all();
    const stored = new Set(rows.map((r) => r.id));
    const storedTwice = rows.filter((r) => r.n > 1).length;
    const all = sqlite.prepare<[], { n: number }>("SELECT count(*) n FROM webhook_deliveries").get()!.n;
    const counted = sqlite.prepare<[], { c: number }>("SELECT coalesce(sum(count), 0) c FROM event_counts").get()!.c;
    let lost = 0;
    for (const id of answered) if (!stored.has(id)) lost += 1;
    return {
      storedAcknowledged: answered.size - lost,
      storedUnanswered: [...stored].filter((id) => !answered.has(id)).length,
      lost,
      duplicated: storedTwice + Math.max(0, counted - all),
      integrity: String(sqlite.pragma("integrity_check", { simple: true })),
    };
  } finally {
    sqlite.close();
  }
}
