import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { addApp, getAppById } from "@/lib/apps/registry";
import { authorizeRequest, visibleAppPks } from "@/lib/auth/authorize";
import { endSession } from "@/lib/auth/ended-sessions";
import { respond } from "@/lib/auth/route-support";
import { SESSION_COOKIE } from "@/lib/auth/session-token";
import { TEST_SECRET, useTestEnv } from "@/lib/auth/test-support";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { logger } from "@/lib/log/logger";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { newOwnerId } from "@/lib/locks/sync-lock";
import { beginRun, finishRun } from "@/lib/sync/run-record";
import { getSyncRuns, getSyncStatus } from "@/lib/sync/runs";
import type { SyncSummary } from "@/lib/sync/summary";

/**
 * Two HTTP servers over one real Postgres (the production servers themselves are
 * lib/server/several-servers.server.test.ts): each is an HTTP server on loopback
 * with the stack of GET /api/v1/sync — the route's error mapper (`respond`), the session
 * and token check, the runs list — over its own connection pool. A sign-out on one ends the
 * session on the other; with Postgres stopped both answer 503 with Retry-After, not 500,
 * lose nothing, and answer again once it is back.
 */
describe.skipIf(POSTGRES_SKIP_REASON)("two servers over one Postgres: sign-out, and Postgres stopped", () => {
  let postgres: TestPostgres;
  const pools: PgDb[] = [];
  const servers: Server[] = [];
  let urlA: string;
  let urlB: string;
  let stateA: Db;
  let token: string;
  let user: { id: number; email: string };
  let appPk: number;

  /** The sync runs route's stack over `state`, served over HTTP on loopback. */
  async function callboardServer(state: Db): Promise<string> {
    const handle = (request: Request) =>
      respond(async () => {
        const caller = await authorizeRequest(state, request);
        const appPks = await visibleAppPks(state, caller);
        return Response.json({ data: await getSyncRuns(state, appPks), apps: await getSyncStatus(state, appPks) });
      });
    const server = createServer((req, res) => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      void handle(new Request(`http://127.0.0.1${req.url}`, { headers })).then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const get = async (base: string, headers: Record<string, string>) => {
    const res = await fetch(`${base}/api/v1/sync`, { headers });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    useTestEnv({ LOG_LEVEL: "silent" });
    logger.level = "silent";
    postgres = await startPostgres();
    const url = await postgres.createDatabase("two_servers_down");
    await migratePostgres(parsePostgresConfig(url));
    const pool = () => {
      const p = openPostgres(parsePostgresConfig(url), { max: 4 });
      pools.push(p);
      return stateDbOfPostgres(p);
    };
    stateA = pool();
    const stateB = pool();
    await addApp(stateA, { appId: "alpha", name: "Alpha", region: "us", apiKey: "key-alpha-0001" });
    const app = (await getAppById(stateA, "alpha"))!;
    appPk = app.pk;
    user = await createUser(stateA, { email: "admin@example.com", password: "admin-password", role: "admin" });
    token = (await createApiToken(stateA, { userId: user.id, name: "ops" })).token;
    // One finished run, recorded through server A.
    const owner = newOwnerId();
    const summary = { kind: "full", status: "succeeded", error: null, skippedRecords: [], pages: 1, fetched: 5, inserted: 5, updated: 0, unchanged: 0, skipped: 0, refreshed: 0 } as unknown as SyncSummary;
    const run = await beginRun(stateA, app, owner, 30_000, { trigger: "test" }, summary, Date.now());
    await finishRun(stateA, app, owner, run!.runPk, summary, { perPage: 1000, committedPage: 1, announcedTotal: 5 }, logger);
    [urlA, urlB] = await Promise.all([callboardServer(stateA), callboardServer(stateB)]);
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await Promise.all(pools.map((p) => p.$client.end()));
    await postgres?.stop();
  });

  it("a session signed out on A is refused by B at its next request", async () => {
    const cookie = `${SESSION_COOKIE}=${await encode({ token: { sub: String(user.id), email: user.email, epoch: 0, sid: "sid-desk" }, secret: TEST_SECRET, salt: SESSION_COOKIE })}`;
    for (const base of [urlA, urlB]) expect((await get(base, { cookie })).status).toBe(200);
    await endSession(stateA, "sid-desk"); // what signing out on A records
    for (const base of [urlB, urlA]) {
      const refused = await get(base, { cookie });
      expect(refused.status).toBe(401);
      expect(refused.json).toMatchObject({ error: { code: "unauthorized" } });
    }
  });

  it("Postgres stopped: both servers answer 503 with Retry-After and no internals; back, they answer again with nothing lost", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const before = await get(urlB, auth);
    expect(before.status).toBe(200);
    expect((before.json.data as Array<{ appId: string; status: string }>).map((r) => [r.appId, r.status])).toEqual([["alpha", "succeeded"]]);

    postgres.pause();
    const answers = [];
    try {
      for (const base of [urlA, urlB]) answers.push(await get(base, auth));
    } finally {
      postgres.start();
    }
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.json).toEqual({ error: { code: "unavailable", message: expect.stringMatching(/database cannot be reached/) } });
      // Nothing of where the database is (host, port, user) reaches the client.
      expect(JSON.stringify(a.json)).not.toMatch(/127\.0\.0\.1|postgres|ECONN|5432/i);
    }

    // Back: both servers answer from the same state as before (the pools reconnect by themselves).
    for (const base of [urlA, urlB]) {
      await expect.poll(async () => (await get(base, auth)).status, { timeout: 15_000, interval: 250 }).toBe(200);
      expect((await get(base, auth)).json).toEqual(before.json);
    }
    expect((await getSyncRuns(stateA, [appPk])).length).toBe(1);
  });
});
