/**
 * Benchmark (issue 26): one Callboard server against two, in the same run, over one
 * Postgres and a two-shard ClickHouse, all on this machine (`npm run bench -- --only
 * several-servers`). Two production servers (scripts/server.ts on the build) share
 * DATABASE_URL, as behind a load balancer:
 *
 *  - webhook deliveries/s answered 200 (each stored in Postgres before its answer): the
 *    same load through A alone, then split over A and B;
 *  - a report's p50/p95 (`/api/v1/usage/daily`, token checked against Postgres), one
 *    client on A alone, then one client on each server at once.
 *
 *  - the cost of each request's session check and token check, median and p95, against
 *    this Postgres and against a SQLite file in the same run: timed in this process
 *    through the server's own functions (lib/auth; `authCheckRows` of
 *    bench/state-in-postgres.ts), not over HTTP, so that the figure is the state reads
 *    alone and not the HTTP stack's cost around them.
 *
 * On two shared cores a second server adds a process, not a core: what this shows is
 * that the shared state does not serialize the servers (no lock taken per delivery or
 * per request), not the gain of a second machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { bodyFactory, load } from "./webhooks";
import type { BenchRow } from "./bench-row";

const SECRET = "several-servers-bench-secret-0123456789abcdef";
const DATABASE = "several_bench";
const APP_ID = "bench-app"; // bench/webhooks.ts's deliveries name it
const loadAvg = () => `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/** `runs` sequential requests of `url` with a bearer token: the latencies in ms, sorted. */
async function timedRuns(url: string, token: string, runs: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b);
}

export async function runSeveralServersBench({ seconds = 20, connections = 16, runs = 60, checkRounds = 10_000 }: { seconds?: number; connections?: number; runs?: number; checkRounds?: number } = {}): Promise<BenchRow[]> {
  const { startPostgres } = await import("@/lib/postgres/test-postgres");
  const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
  const { migratePostgres, openPostgres } = await import("@/db/postgres/client");
  const { parsePostgresConfig } = await import("@/lib/postgres/config");
  const { migrateClickHouse } = await import("@/lib/clickhouse/migrate");
  const { stateDbOfPostgres } = await import("@/db/state");
  const { addApp } = await import("@/lib/apps/registry");
  const { createUser } = await import("@/lib/auth/users");
  const { createApiToken } = await import("@/lib/auth/tokens");
  const { basicAuthHeader } = await import("@/lib/ingest/auth");
  const { resetEnvForTests } = await import("@/lib/config/env");
  const { startTestServer, BUILT } = await import("@/lib/server/test-server");
  const { authCheckRows } = await import("./state-in-postgres");
  if (!BUILT) throw new Error("several-servers: run `npm run build` first (the servers run the production build)");
  process.env.AUTH_SECRET = SECRET;
  resetEnvForTests();

  const area = "several servers (Postgres + 2 × 18.16 ClickHouse shards, one machine)";
  const rows: BenchRow[] = [];
  const [postgres, ch] = await Promise.all([startPostgres(), startClickHouse({ shards: 2 })]);
  const dir = mkdtempSync(path.join(os.tmpdir(), "callboard-bench-several-"));
  const servers: Array<Awaited<ReturnType<typeof startTestServer>>> = [];
  let pg: ReturnType<typeof openPostgres> | undefined;
  try {
    const url = await postgres.createDatabase(DATABASE);
    await migratePostgres(parsePostgresConfig(url));
    await migrateClickHouse(ch.config(DATABASE));
    pg = openPostgres(parsePostgresConfig(url), { max: 2 });
    const state = stateDbOfPostgres(pg);
    await addApp(state, { appId: APP_ID, name: "Bench", region: "us", apiKey: "bench-key-0000", webhookUsername: "hook", webhookPassword: "hook-password-0001", webhookUseBasicAuth: true });
    const admin = await createUser(state, { email: "bench@callboard.test", password: "bench-password-123", role: "admin" });
    const token = (await createApiToken(state, { userId: admin.id, name: "bench" })).token;
    const env = {
      DATABASE_URL: url,
      ...ch.env(DATABASE),
      DATABASE_PATH: path.join(dir, "unused.db"),
      AUTH_SECRET: SECRET,
      LOG_LEVEL: "warn",
    };
    const [a, b] = await Promise.all([startTestServer({ env, nodeImport: true }), startTestServer({ env, nodeImport: true })]);
    servers.push(a, b);
    const auth = basicAuthHeader("hook", "hook-password-0001");

    // Webhooks: warm both, then A alone, then A and B with half the connections each.
    for (const s of [a, b]) await load(s.base, auth, 2, 4, bodyFactory(`warm-${s.port}`, 0));
    const one = await load(a.base, auth, seconds, connections, bodyFactory("one", 0.05));
    const [twoA, twoB] = await Promise.all([a, b].map((s) => load(s.base, auth, seconds, connections / 2, bodyFactory(`two-${s.port}`, 0.05))));
    const oneRate = one.answered200 / one.seconds;
    const twoRate = (twoA.answered200 + twoB.answered200) / Math.max(twoA.seconds, twoB.seconds);
    const failed = (x: typeof one) => x.result.non2xx + x.result.errors + x.result.timeouts;
    rows.push({ area, metric: `webhook deliveries/s answered 200, through A alone (${connections} connections, ${seconds} s; ${loadAvg()})`, target: "", measured: `${Math.round(oneRate).toLocaleString("en")}/s (${failed(one)} not 200)` });
    rows.push({ area, metric: `webhook deliveries/s answered 200, through A and B at once (${connections / 2} connections each; ${loadAvg()})`, target: "", measured: `${Math.round(twoRate).toLocaleString("en")}/s (${failed(twoA) + failed(twoB)} not 200; ×${(twoRate / oneRate).toFixed(2)} of one server)` });

    // A report, its token checked against Postgres on every request.
    const report = "/api/v1/usage/daily?tz=Europe/Berlin";
    await timedRuns(`${a.base}${report}`, token, 5);
    await timedRuns(`${b.base}${report}`, token, 5);
    const alone = await timedRuns(`${a.base}${report}`, token, runs);
    const both = (await Promise.all([a, b].map((s) => timedRuns(`${s.base}${report}`, token, runs)))).flat().sort((x, y) => x - y);
    rows.push({ area, metric: `report p50 / p95 (${report}), one client on A alone (${runs} requests; ${loadAvg()})`, target: "", measured: `${quantile(alone, 0.5).toFixed(1)} / ${quantile(alone, 0.95).toFixed(1)} ms` });
    rows.push({ area, metric: `report p50 / p95, one client on each of A and B at once (${2 * runs} requests; ${loadAvg()})`, target: "", measured: `${quantile(both, 0.5).toFixed(1)} / ${quantile(both, 0.95).toFixed(1)} ms` });

    // Each request's session and token check, on this Postgres (both servers idle) and on a SQLite file.
    rows.push(...(await authCheckRows(state, checkRounds, `${area}; ${loadAvg()}`)));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await pg?.$client.end();
    await ch.stop();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
