/**
 * `npm run bench -- --only postgres`: what moving Callboard's state into Postgres
 * (issue 26, docs/decisions/0035-state-in-postgres.md) costs, measured against a real
 * Postgres started on loopback by the test harness, beside SQLite in the same run:
 *
 * - the state reads each signed-in request makes (session: is it ended, the user, the
 *   viewer's grants; token: the token by hash, the user, the grants). SQLite runs the
 *   server's own functions; Postgres runs the same statements through `pg`, since the auth
 *   modules do not speak Postgres yet — the figure is the round trips' cost, which is what
 *   the missing modules will pay;
 * - webhook deliveries stored per second in the Postgres inbox (lib/ingest/postgres-inbox.ts:
 *   durable, deduplicated, queued for ClickHouse) from one pool and from two pools (two
 *   servers), 32 in flight each. Not through HTTP: the ingest does not use the inbox yet.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { openDatabase } from "@/db/client";
import { migratePostgres } from "@/db/postgres/client";
import { tempDbFile } from "@/lib/analytics/test-fixtures";
import { addApp } from "@/lib/apps/registry";
import { callerForSession, callerForUser } from "@/lib/auth/authorize";
import { createApiToken, hashToken, resolveApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { storeDelivery } from "@/lib/ingest/postgres-inbox";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres } from "@/lib/postgres/testing";
import type { BenchRow } from "./run";

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
    const pool = new pg.Pool({ connectionString: url, max: 8 });

    // The same state on both sides: two apps, a viewer granted one, the viewer's token.
    const sqlite = openDatabase(tempDbFile("bench-state"));
    addApp(sqlite, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-1234" });
    addApp(sqlite, { appId: "beta", name: "Beta", region: "us", apiKey: "key-beta-1234" });
    const viewer = await createUser(sqlite, { email: "viewer@example.com", password: "correct horse battery", role: "viewer", apps: ["acme"] });
    const { token } = createApiToken(sqlite, { userId: viewer.id, name: "bench" });
    await pool.query("INSERT INTO apps (pk, app_id, name, region, api_key_enc, api_key_last4) VALUES (1, 'acme', 'Acme', 'us', 'x', 'x'), (2, 'beta', 'Beta', 'us', 'x', 'x')");
    await pool.query("INSERT INTO users (pk, email, password_hash, role, created_ms, updated_ms) VALUES ($1, 'viewer@example.com', 'h', 'viewer', 1, 1)", [viewer.id]);
    await pool.query("INSERT INTO user_app_grants (user_pk, app_pk) VALUES ($1, 1)", [viewer.id]);
    await pool.query("INSERT INTO api_tokens (user_pk, name, token_hash, prefix, created_ms, last_used_ms) VALUES ($1, 'bench', $2, 'x', 1, $3)", [viewer.id, hashToken(token), Date.now()]);

    const claims = { sessionId: "bench-session", userId: viewer.id, sessionEpoch: 0 };
    const pgUser = async (userPk: number) => {
      const user = await pool.query("SELECT pk, email, role, disabled, session_epoch FROM users WHERE pk = $1", [userPk]);
      if (user.rows[0]?.role !== "admin") await pool.query("SELECT app_pk FROM user_app_grants WHERE user_pk = $1 ORDER BY app_pk", [userPk]);
    };
    const checks: Array<[string, () => unknown, () => Promise<unknown>]> = [
      [
        "session check",
        () => callerForSession(sqlite, claims),
        async () => {
          await pool.query("SELECT sid FROM ended_sessions WHERE sid = $1", [claims.sessionId]);
          await pgUser(claims.userId);
        },
      ],
      [
        "token check",
        () => {
          const resolved = resolveApiToken(sqlite, token);
          return resolved && callerForUser(sqlite, resolved.userId);
        },
        async () => {
          const found = await pool.query<{ user_pk: string }>("SELECT pk, user_pk, revoked, last_used_ms FROM api_tokens WHERE token_hash = $1", [hashToken(token)]);
          await pgUser(Number(found.rows[0]!.user_pk));
        },
      ],
    ];
    for (const [name, onSqlite, onPostgres] of checks) {
      await timed(200, onSqlite);
      await timed(200, onPostgres); // warm both: prepared statements, the pool's connection
      const s = await timed(options.rounds, onSqlite);
      const p = await timed(options.rounds, onPostgres);
      rows.push({ area: "postgres", metric: `${name}, SQLite (server's functions), median / p95`, target: "informational", measured: `${micros(s.median)} / ${micros(s.p95)}` });
      rows.push({ area: "postgres", metric: `${name}, Postgres on loopback (same statements), median / p95`, target: "informational", measured: `${micros(p.median)} / ${micros(p.p95)}` });
    }
    sqlite.$client.close();
    await pool.end();

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
  } finally {
    await server.stop();
  }
  return rows;
}
