/**
 * Webhook ingest benchmark: autocannon on loopback against the production server
 * (`next build`, then scripts/server.ts on a free port with a fresh warehouse), and the
 * same load against a bare node:http + better-sqlite3 receiver (bench/webhook-ceiling.ts)
 * as the ceiling. Proves zero loss: every delivery answered 200 is in the warehouse,
 * and repeats are stored and counted once.
 *
 *   npx tsx bench/webhooks.ts [seconds]
 *
 * The kill test is bench/webhook-kill.ts (`npm run bench -- --only webhook-kill`).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import type { BenchRow } from "./bench-row";

// autocannon ships no types: the part used here.
interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  setupRequest: (req: { body?: string }, context: BenchContext) => { body?: string };
  onResponse: (status: number, body: string, context: BenchContext) => void;
}
interface AutocannonResult {
  latency: { p50: number; p99: number; p97_5: number; max: number };
  requests: { total: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  requests: AutocannonRequest[];
  initialContext?: BenchContext;
}) => Promise<AutocannonResult>;
interface BenchContext {
  id?: string;
}

const ROOT = process.cwd();
const APP_ID = "bench-app";
const USER = "bench-hook";

export interface WebhookBenchOptions {
  /** Seconds of measured load (default 30). */
  durationSeconds?: number;
  /** Concurrent connections (default 32). */
  connections?: number;
  /** Share of deliveries sent again, as the platform may (default 0.05). */
  repeatShare?: number;
  /** Run `npm run build` even when a build exists. */
  build?: boolean;
}

export interface LoadStats {
  result: AutocannonResult;
  answered200: number;
  answeredStored: number;
  answeredDuplicate: number;
  answeredIds: Set<string>;
  seconds: number;
}

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

export async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with code ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`server did not answer at ${url} within ${timeoutMs / 1000} s`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
  await exited;
  clearTimeout(timer);
}

/** Realistic mix: mostly chat triggers, some recordings and live call events, and repeats. */
export function bodyFactory(run: string, repeatShare: number) {
  const recent: Array<{ id: string; body: string }> = [];
  let n = 0;
  return (): { id: string; body: string } => {
    if (recent.length > 100 && Math.random() < repeatShare) return recent[Math.floor(Math.random() * recent.length)];
    n += 1;
    // Event times are "now", as for a live platform (a recording starts a while before).
    const base = Math.floor(Date.now() / 1000);
    const id = `${run}-${n}`;
    const r = n % 20;
    const env = { appId: APP_ID, region: "us", webhook: "wh-bench", benchRun: run, benchId: id };
    let payload: Record<string, unknown>;
    if (r < 12) {
      payload = {
        ...env, trigger: "message_sent",
        data: { message: { id, conversationId: "alice_user_bob", sender: "alice", receiver: "bob", receiverType: "user", category: "message", type: "text", sentAt: base, updatedAt: base, data: { text: `hello ${n}`, entities: { sender: { entity: { uid: "alice", name: "Alice", status: "online", role: "default" }, entityType: "user" } } } } },
      };
    } else if (r < 14) {
      payload = { ...env, trigger: "message_reaction_added", data: { reaction: { id, messageId: `m-${n - 1}`, reaction: "👍", uid: "bob", reactedAt: base, reactedBy: { uid: "bob", name: "Bob" } } } };
    } else if (r === 14) {
      payload = { ...env, trigger: "user_connection_status_changed", data: { timestamp: Date.now(), user: { uid: `u${n}`, name: "U" }, status: "online", userPresenceChanged: true, currentConnection: { action: "connected", platform: "web" } } };
    } else if (r < 17) {
      payload = { ...env, trigger: "recording_generated", data: { recordingDate: "2024-01-10", duration: "61.5", startTime: String(base - 600), sessionId: id, recording_url: `https://recordings.example.test/${id}.mp4` } };
    } else if (r === 17) {
      payload = { ...env, trigger: "call_started", type: "call", data: { created_at: base, sessionId: `s-${n}` } };
    } else {
      payload = { ...env, trigger: "call_participant_joined", type: "call", data: { sessionId: `s-${n - (r - 17)}`, occupant: { joined_at: base, name: `Person ${n}`, audio_call: "false" }, initial_config: { is_audio_only: "false", sdk: "web" } } };
    }
    const item = { id, body: JSON.stringify(payload) };
    recent.push(item);
    if (recent.length > 2000) recent.shift();
    return item;
  };
}

export async function load(url: string, auth: string, seconds: number, connections: number, next: () => { id: string; body: string }): Promise<LoadStats> {
  const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
  const stats = { answered200: 0, answeredStored: 0, answeredDuplicate: 0, answeredIds: new Set<string>() };
  const started = Date.now();
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    pipelining: 1,
    initialContext: {},
    requests: [
      {
        method: "POST",
        path: `/api/webhooks/${APP_ID}`,
        headers: { "content-type": "application/json", authorization: auth },
        setupRequest: (req, context) => {
          const item = next();
          context.id = item.id;
          return { ...req, body: item.body };
        },
        onResponse: (status, body, context) => {
          if (status !== 200 || !context.id) return;
          stats.answered200 += 1;
          stats.answeredIds.add(context.id);
          if (body.includes("duplicate")) stats.answeredDuplicate += 1;
          else stats.answeredStored += 1;
        },
      },
    ],
  });
  return { result, ...stats, seconds: (Date.now() - started) / 1000 };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/** Rounds summed; latency: the median round's p50 and the worst round's p99. */
function merge(rounds: LoadStats[]): LoadStats {
  const p50s = rounds.map((x) => x.result.latency.p50).sort((a, b) => a - b);
  const sum = (f: (x: LoadStats) => number) => rounds.reduce((a, x) => a + f(x), 0);
  return {
    result: {
      latency: { p50: p50s[Math.floor(p50s.length / 2)], p99: Math.max(...rounds.map((x) => x.result.latency.p99)), p97_5: 0, max: Math.max(...rounds.map((x) => x.result.latency.max)) },
      requests: { total: sum((x) => x.result.requests.total), average: 0 },
      non2xx: sum((x) => x.result.non2xx),
      errors: sum((x) => x.result.errors),
      timeouts: sum((x) => x.result.timeouts),
      duration: sum((x) => x.result.duration),
    },
    answered200: sum((x) => x.answered200),
    answeredStored: sum((x) => x.answeredStored),
    answeredDuplicate: sum((x) => x.answeredDuplicate),
    answeredIds: new Set(rounds.flatMap((x) => [...x.answeredIds])),
    seconds: sum((x) => x.seconds),
  };
}

/**
 * CPU seconds used so far by a process and its descendants (Linux /proc; 0 elsewhere).
 * On a shared machine throughput depends on the neighbours; CPU per delivery does not.
 */
function treeCpuSeconds(pid: number | undefined): number {
  if (pid === undefined || !existsSync(`/proc/${pid}`)) return 0;
  const TICKS = 100; // USER_HZ on Linux
  let total = 0;
  const seen = new Set<number>();
  const walk = (p: number) => {
    if (seen.has(p)) return;
    seen.add(p);
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime
      for (const task of readdirSync(`/proc/${p}/task`)) {
        for (const c of readFileSync(`/proc/${p}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) walk(Number(c));
      }
    } catch {
      // the process ended meanwhile
    }
  };
  walk(pid);
  return total;
}

/** A production build, a fresh warehouse with the bench app registered, and the server's environment. */
export interface BenchWarehouse {
  dir: string;
  file: string;
  auth: string;
  childEnv: NodeJS.ProcessEnv;
  tsx: string;
}

export async function prepareBenchWarehouse(options: { build?: boolean; prefix: string }): Promise<BenchWarehouse> {
  if (options.build || !existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
    console.log("webhooks bench: building (npm run build)…");
    const b = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "inherit", env: { AUTH_SECRET: randomBytes(32).toString("base64url"), ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
    if (b.status !== 0) throw new Error("npm run build failed");
  }
  const dir = mkdtempSync(path.join(tmpdir(), options.prefix));
  const file = path.join(dir, "warehouse.db");
  const secret = randomBytes(32).toString("base64url");
  const password = randomBytes(18).toString("base64url");
  const auth = `Basic ${Buffer.from(`${USER}:${password}`).toString("base64")}`;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env, NODE_ENV: "production" as const, DATABASE_PATH: file, AUTH_SECRET: secret, AUTH_TRUST_HOST: "true",
    SYNC_INTERVAL_SECONDS: "0", LOG_LEVEL: "warn", NEXT_TELEMETRY_DISABLED: "1",
  };
  const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
  // A fresh warehouse with one app whose webhook uses Basic auth (registered through the CLI).
  const add = spawnSync(tsx, ["scripts/apps.ts", "add", "--id", APP_ID, "--name", "Bench", "--region", "us", "--api-key", "bench-key-0000", "--webhook-user", USER, "--webhook-password", password], {
    cwd: ROOT, env: childEnv, encoding: "utf8",
  });
  if (add.status !== 0) await registerDirectly(file, secret, password);
  return { dir, file, auth, childEnv, tsx };
}

export async function runWebhookBench(options: WebhookBenchOptions = {}): Promise<BenchRow[]> {
  const seconds = options.durationSeconds ?? 30;
  const connections = options.connections ?? 32;
  const repeatShare = options.repeatShare ?? 0.05;
  const { dir, file, auth, childEnv, tsx } = await prepareBenchWarehouse({ build: options.build, prefix: "callboard-webhook-bench-" });
  const children: ChildProcess[] = [];
  try {
    // Both receivers run side by side and take the load in alternating rounds, so that
    // neighbours on a shared machine weigh on both alike.
    const port = await freePort();
    const server = spawn(tsx, ["scripts/server.ts"], { cwd: ROOT, env: { ...childEnv, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
    children.push(server);
    const cport = await freePort();
    const ceiling = spawn(tsx, ["bench/webhook-ceiling.ts", String(cport), path.join(dir, "ceiling.db")], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    children.push(ceiling);
    const url = `http://127.0.0.1:${port}`;
    const curl = `http://127.0.0.1:${cport}`;
    await waitForHttp(`${url}/api/health`, server);
    await waitForHttp(curl, ceiling);
    await load(url, auth, 3, connections, bodyFactory("warmup", repeatShare));
    await load(curl, auth, 3, connections, bodyFactory("warmup", repeatShare));

    const rounds = seconds >= 20 ? 3 : 1;
    const per = seconds / rounds;
    const nextCb = bodyFactory("main", repeatShare);
    const nextCe = bodyFactory("main", repeatShare);
    const cbRounds: LoadStats[] = [];
    const ceRounds: LoadStats[] = [];
    let cbCpu = 0;
    let ceCpu = 0;
    console.log(`webhooks bench: ${rounds} × (${per} s Callboard, ${per} s ceiling) at ${connections} connections…`);
    for (let i = 0; i < rounds; i++) {
      let c0 = treeCpuSeconds(server.pid);
      cbRounds.push(await load(url, auth, per, connections, nextCb));
      cbCpu += treeCpuSeconds(server.pid) - c0;
      c0 = treeCpuSeconds(ceiling.pid);
      ceRounds.push(await load(curl, auth, per, connections, nextCe));
      ceCpu += treeCpuSeconds(ceiling.pid) - c0;
    }
    await new Promise((r) => setTimeout(r, 500)); // requests in flight at the stop finish
    await stop(server);
    await stop(ceiling);
    const cb = merge(cbRounds);
    const ce = merge(ceRounds);
    const proof = verify(file, cb);

    const rate = cb.answered200 / cb.seconds;
    const crate = ce.answered200 / ce.seconds;
    const r = cb.result;
    return [
      { area: "webhooks", metric: `deliveries/s, production server (${seconds} s, ${connections} conns, fsynced)`, target: "≥ 5,000/s", measured: `${fmt(rate)}/s`, ok: rate >= 5000 },
      { area: "webhooks", metric: "latency p50 / p99 (median p50, worst p99 of the rounds)", target: "p99 < 50 ms", measured: `${r.latency.p50} / ${r.latency.p99} ms`, ok: r.latency.p99 < 50 },
      {
        area: "webhooks", metric: "zero loss: 200 answers vs stored", target: "every 200 stored; repeats once",
        measured: `${fmt(cb.answered200)} × 200 (${fmt(cb.answeredDuplicate)} repeats) → ${fmt(proof.rows)} rows + ${fmt(proof.repeats)} repeats stored (${fmt(proof.rows + proof.repeats - cb.answered200)} in flight at round ends); lost ${proof.lost}; each row counted once: ${proof.countedOnce ? "yes" : "NO"}; non-2xx ${r.non2xx}, errors ${r.errors}`,
        ok: proof.lost === 0 && proof.countedOnce && proof.rows >= cb.answeredStored,
      },
      { area: "webhooks", metric: "ceiling: bare node:http + better-sqlite3 (same durability, no checks)", target: "—", measured: `${fmt(crate)}/s, ${ce.result.latency.p50} / ${ce.result.latency.p99} ms` },
      { area: "webhooks", metric: "Callboard / ceiling", target: "—", measured: `${(rate / crate).toFixed(2)}` },
      {
        area: "webhooks", metric: "server CPU per delivery (Callboard / ceiling)", target: "—",
        measured: cbCpu > 0 && ceCpu > 0
          ? `${fmt((cbCpu * 1e6) / cb.result.requests.total)} / ${fmt((ceCpu * 1e6) / ce.result.requests.total)} µs (one core: ${fmt(cb.result.requests.total / cbCpu)} / ${fmt(ce.result.requests.total / ceCpu)} per s)`
          : "n/a",
      },
    ];
  } finally {
    for (const c of children) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fallback when the apps CLI is not there: register the bench app through the registry. */
async function registerDirectly(file: string, secret: string, password: string): Promise<void> {
  const prior = process.env.AUTH_SECRET;
  process.env.AUTH_SECRET = secret;
  const { resetEnvForTests } = await import("@/lib/config/env");
  resetEnvForTests();
  try {
    const { openDatabase } = await import("@/db/client");
    const { addApp } = await import("@/lib/apps/registry");
    const db = openDatabase(file);
    await addApp(db, { appId: APP_ID, name: "Bench", region: "us", apiKey: "bench-key-0000", webhookUsername: USER, webhookPassword: password, webhookUseBasicAuth: true });
    db.$client.close();
  } finally {
    if (prior === undefined) delete process.env.AUTH_SECRET;
    else process.env.AUTH_SECRET = prior;
    resetEnvForTests();
  }
}

function verify(file: string, stats: LoadStats): { rows: number; repeats: number; lost: number; counted: number; countedOnce: boolean } {
  const sqlite = new Database(file, { readonly: true });
  try {
    const ids = new Set(
      sqlite.prepare<[], { id: string }>(`SELECT json_extract(body, '$.benchId') AS id FROM webhook_deliveries WHERE json_extract(body, '$.benchRun') = 'main'`).all().map((r) => r.id),
    );
    const all = sqlite.prepare<[], { rows: number }>(`SELECT count(*) rows FROM webhook_deliveries`).get()!;
    const repeats = sqlite.prepare<[], { r: number }>(`SELECT coalesce(sum(repeat_count), 0) r FROM webhook_deliveries WHERE json_extract(body, '$.benchRun') = 'main'`).get()!.r;
    const counted = sqlite.prepare<[], { c: number }>(`SELECT coalesce(sum(count), 0) c FROM event_counts`).get()!.c;
    let lost = 0;
    for (const id of stats.answeredIds) if (!ids.has(id)) lost += 1;
    // Every stored delivery (warm-up included) is counted exactly once, whatever its repeats.
    return { rows: ids.size, repeats, lost, counted, countedOnce: counted === all.rows };
  } finally {
    sqlite.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 30);
  runWebhookBench({ durationSeconds: seconds })
    .then((rows) => console.table(rows))
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
