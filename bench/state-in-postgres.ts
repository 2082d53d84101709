/**
 * `npm run bench -- --only postgres`: what moving Callboard's state into Postgres
 * (issue 26, docs/decisions/0035-state-in-postgres.md) costs, measured against a real
 * Postgres started on loopback by the test harness, beside SQLite in the same run:
 *
 * - the state reads each signed-in request makes (session: is it ended, the user, the
 *   viewer's grants; token: the token by hash, the user, the grants), through the server's
 *   own functions (lib/auth) on both: the SQLite file and Postgres on loopback;
 * - webhook deliveries stored per second in the Postgres inbox (lib/ingest/postgres-inbox.ts:
 *   durable, deduplicated, queued for ClickHouse) from one pool and from two pools (two
 *   servers), 32 in flight each;
 * - the same through the webhook receiver over HTTP (`createPostgresIngestor` behind the
 *   node:http handler, Basic auth checked, half the deliveries call events whose live
 *   state is applied in the same transaction): one receiver, then two, 32 requests in
 *   flight to each. The server does not serve it yet (the DATABASE_URL gate).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { openDatabase } from "@/db/client";
import type { Db } from "@/db/client";
import { migratePostgres, openPostgres } from "@/db/postgres/client";
import { stateDbOfPostgres, tablesOf } from "@/db/state";
import { tempDbFile } from "@/lib/analytics/test-fixtures";
import { callerForSession, callerForUser } from "@/lib/auth/authorize";
import { createApiToken, resolveApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { addApp } from "@/lib/apps/registry";
import { basicAuthHeader } from "@/lib/ingest/auth";
import { messageSent, participantJoined } from "@/lib/ingest/test-deliveries";
import { createIngestHttpHandler } from "@/lib/ingest/webhook-handler";
import { createPostgresIngestor, storeDelivery } from "@/lib/ingest/postgres-inbox";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres } from "@/lib/postgres/test-postgres";
import type { BenchRow } from "./bench-row";

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const micros = (ms: number) => `${Math.round(ms * 1000)} µs`;

async function timed(rounds: number, once: () => unknown): Promise<{ median: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await once();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

export async function runStateInPostgresBench(options: { rounds: number; deliveries: number }): Promise<BenchRow[]> {
  if (POSTGRES_SKIP_REASON) return [{ area: "postgres", metric: "skipped", target: "", measured: POSTGRES_SKIP_REASON }];
  process.env.AUTH_SECRET ??= "bench-secret-at-least-32-characters-long";
  const server = await startPostgres();
  const rows: BenchRow[] = [];
  try {
    const url = await server.createDatabase("bench_state");
    await migratePostgres(parsePostgresConfig(url));
    const pool = openPostgres(parsePostgresConfig(url), { max: 8 });
    const postgres = stateDbOfPostgres(pool);

    rows.push(...(await authCheckRows(postgres, options.rounds, "postgres")));
    await pool.$client.end();

    for (const servers of [1, 2]) {
      const pools = Array.from({ length: servers }, () => new pg.Pool({ connectionString: url, max: 32 }));
      let next = 0;
      const perServer = 32;
      const t0 = performance.now();
      await Promise.all(
        pools.flatMap((p) =>
          Array.from({ length: perServer }, async () => {
            for (let i = next++; i < options.deliveries; i = next++) {
              const data = { sessionId: `s${servers}-${i}`, startedAt: 1_767_225_600 + i };
              await storeDelivery(p, {
                appPk: 1, idemKey: `call_ended:s${servers}-${i}`, trigger: "call_ended", webhook: "wh", type: "call", sessionId: data.sessionId,
                outcome: "applied", body: JSON.stringify({ trigger: "call_ended", data, appId: "acme", region: "us", webhook: "wh" }), receivedMs: Date.now(),
              });
            }
          }),
        ),
      );
      const seconds = (performance.now() - t0) / 1000;
      rows.push({ area: "postgres", metric: `inbox deliveries/s stored, ${servers} pool${servers > 1 ? "s" : ""} × 32 in flight`, target: "informational", measured: `${Math.round(options.deliveries / seconds)}/s` });
      await Promise.all(pools.map((p) => p.end()));
    }

    rows.push(...(await receiverThroughput(url, options.deliveries)));
  } finally {
    await server.stop();
  }
  return rows;
}

/**
 * The state reads each signed-in request makes, timed through the server's own functions
 * (lib/auth) in this process: a session check (`callerForSession`: ended?, the user, the
 * viewer's grants) and a token check (`resolveApiToken`, then `callerForUser`), on a fresh
 * SQLite file and on `postgres` (a migrated Callboard database; two apps and a viewer are
 * added to it), one after the other in the same run. Median and p95 of `rounds` each,
 * after 200 warm-up rounds.
 */
export async function authCheckRows(postgres: Db, rounds: number, area: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const sqlite = openDatabase(tempDbFile("bench-state"));
  try {
    // The same state on both sides: two apps, a viewer granted one, the viewer's token.
    const claims = new Map<Db, { sessionId: string; userId: number; sessionEpoch: number }>();
    const tokens = new Map<Db, string>();
    for (const state of [sqlite, postgres]) {
      const { apps } = tablesOf(state);
      await state.insert(apps).values([
        { appId: "auth-bench-acme", name: "Acme", region: "us", apiKeyEnc: "x", apiKeyLast4: "x" },
        { appId: "auth-bench-beta", name: "Beta", region: "us", apiKeyEnc: "x", apiKeyLast4: "x" },
      ]);
      const viewer = await createUser(state, { email: "auth-bench-viewer@example.com", password: "correct horse battery", role: "viewer", apps: ["auth-bench-acme"] });
      claims.set(state, { sessionId: "bench-session", userId: viewer.id, sessionEpoch: 0 });
      tokens.set(state, (await createApiToken(state, { userId: viewer.id, name: "bench" })).token);
    }

    const sessionCheck = (state: Db) => () => callerForSession(state, claims.get(state)!);
    const tokenCheck = (state: Db) => async () => {
      const resolved = await resolveApiToken(state, tokens.get(state)!);
      return resolved && callerForUser(state, resolved.userId);
    };
    const checks: Array<[string, (state: Db) => () => Promise<unknown>]> = [
      ["session check", sessionCheck],
      ["token check", tokenCheck],
    ];
    for (const [name, check] of checks) {
      await timed(200, check(sqlite));
      await timed(200, check(postgres)); // warm both: prepared statements, the pool's connection
      const s = await timed(rounds, check(sqlite));
      const p = await timed(rounds, check(postgres));
      rows.push({ area, metric: `${name} in-process (${rounds} rounds), SQLite file, median / p95`, target: "informational", measured: `${micros(s.median)} / ${micros(s.p95)}` });
      rows.push({ area, metric: `${name} in-process (${rounds} rounds), Postgres on loopback, median / p95`, target: "informational", measured: `${micros(p.median)} / ${micros(p.p95)}` });
    }
  } finally {
    sqlite.$client.close();
  }
  return rows;
}

/** Deliveries/s through one and through two webhook receivers over HTTP, on one Postgres. */
async function receiverThroughput(url: string, deliveries: number): Promise<BenchRow[]> {
  const config = parsePostgresConfig(url);
  const admin = openPostgres(config, { max: 2 });
  const password = "bench-hook-password";
  await addApp(stateDbOfPostgres(admin), { appId: "hooked", name: "Hooked", region: "us", apiKey: "bench-key-hooked", webhookUsername: "hook", webhookPassword: password });
  const headers = { "content-type": "application/json", authorization: basicAuthHeader("hook", password) };
  const rows: BenchRow[] = [];
  for (const receivers of [1, 2]) {
    const pools = Array.from({ length: receivers }, () => openPostgres(config, { max: 16 }));
    const servers: Server[] = [];
    const bases: string[] = [];
    for (const pool of pools) {
      const ingestor = createPostgresIngestor(pool);
      const handle = createIngestHttpHandler(() => ingestor);
      const server = createServer((req, res) => void (handle(req, res) || res.writeHead(404).end()));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      servers.push(server);
      bases.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/hooked`);
    }
    let next = 0;
    let refused = 0;
    const t0 = performance.now();
    await Promise.all(
      bases.flatMap((base) =>
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < deliveries; i = next++) {
            const at = 1_767_225_600 + i;
            const body = i % 2 === 0
              ? participantJoined({ appId: "hooked" }, `r${receivers}-call-${i >> 3}`, { name: `p${i}`, joined_at: at })
              : messageSent({ appId: "hooked" }, `r${receivers}-msg-${i}`, at);
            const res = await fetch(base, { method: "POST", headers, body: JSON.stringify(body) });
            await res.arrayBuffer();
            if (res.status !== 200) refused++;
          }
        }),
      ),
    );
    const seconds = (performance.now() - t0) / 1000;
    rows.push({
      area: "postgres",
      metric: `webhook deliveries/s over HTTP, ${receivers} receiver${receivers > 1 ? "s" : ""} × 32 in flight (half call events)`,
      target: "informational",
      measured: `${Math.round(deliveries / seconds)}/s${refused ? ` (${refused} not 200)` : ""}`,
    });
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await Promise.all(pools.map((p) => p.$client.end()));
  }
  await admin.$client.end();
  return rows;
}
