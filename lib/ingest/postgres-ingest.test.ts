import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { addApp } from "@/lib/apps/registry";
import { useTestEnv } from "@/lib/auth/test-support";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { basicAuthHeader } from "./auth";
import { messageSent, participantJoined, sessionStarted } from "./test-deliveries";
import { createIngestHttpHandler } from "./webhook-handler";
import { createPostgresIngestor } from "./postgres-inbox";
import { postJson, type RawResponse } from "./test-harness";

process.env.LOG_LEVEL ??= "silent";

/**
 * The webhook receiver of two Callboard servers over one Postgres (issue 26, decision
 * 0035 §6), through the real node:http handler: each server has its own pool; the app, its
 * webhook password (encrypted under the shared AUTH_SECRET) and every delivery are in
 * Postgres. A 200 means stored; a delivery sent to both servers is stored once; with
 * Postgres down the answer is 503 + Retry-After, never a 200 that is lost.
 */
describe.skipIf(POSTGRES_SKIP_REASON)("webhooks to two servers over one Postgres", () => {
  let postgres: TestPostgres;
  const pools: PgDb[] = [];
  const servers: Server[] = [];
  let urlA: string;
  let urlB: string;
  let pgState: PgDb;
  const HOOK_USER = "hook";
  const HOOK_PASSWORD = "pg-hook-password-SECRET";
  const AUTH = basicAuthHeader(HOOK_USER, HOOK_PASSWORD);
  const A = { appId: "acme" };

  async function callboardServer(url: string): Promise<string> {
    const pool = openPostgres(parsePostgresConfig(url), { max: 4 });
    pools.push(pool);
    const ingestor = createPostgresIngestor(pool);
    const handle = createIngestHttpHandler(() => ingestor);
    const server = createServer((req, res) => {
      if (!handle(req, res)) res.writeHead(404).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    useTestEnv();
    postgres = await startPostgres();
    const url = await postgres.createDatabase("webhooks_two_servers");
    await migratePostgres(parsePostgresConfig(url));
    pgState = openPostgres(parsePostgresConfig(url), { max: 2 });
    pools.push(pgState);
    await addApp(stateDbOfPostgres(pgState), { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD });
    [urlA, urlB] = await Promise.all([callboardServer(url), callboardServer(url)]);
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await Promise.all(pools.map((p) => p.$client.end()));
    await postgres?.stop();
  });

  const count = async (sql: string, params: unknown[] = []) => Number((await pgState.$client.query<{ n: string }>(sql, params)).rows[0]!.n);

  it("both servers know the app and check its password from Postgres: 404 for an unknown app, 401 for a wrong password", async () => {
    for (const base of [urlA, urlB]) {
      expect((await postJson(base, "nobody", messageSent(A, "x"), AUTH)).status).toBe(404);
      const wrong = await postJson(base, "acme", messageSent(A, "x"), basicAuthHeader(HOOK_USER, "wrong"));
      expect(wrong.status).toBe(401);
      expect(wrong.headers["www-authenticate"]).toContain("Basic");
    }
    await expect.poll(() => count("SELECT count(*) AS n FROM webhook_rejections WHERE code = 'unauthorized'")).toBe(2);
  });

  it("keeps the newest refused deliveries per app, not every one a sender ever got refused", async () => {
    const ingestor = createPostgresIngestor(pgState, { keepRejections: 10 });
    const wrong = { contentType: "application/json", authorization: basicAuthHeader(HOOK_USER, "guessing") };
    for (let i = 0; i < 400; i++) expect((await ingestor.preflight("POST", "acme", wrong)).ok).toBe(false);
    // Without the cut there would be 400 more; with it, the newest 10 and the few written meanwhile.
    await expect.poll(() => count("SELECT count(*) AS n FROM webhook_rejections"), { timeout: 10_000 }).toBeLessThanOrEqual(20);
  });

  it("each delivery sent to both servers at once is stored and queued once; every 200 is in Postgres", async () => {
    const deliveries = Array.from({ length: 120 }, (_, i) =>
      i % 3 === 0 ? sessionStarted(A, `call-${i}`, 1_767_225_600 + i) : i % 3 === 1 ? participantJoined(A, `call-${i - 1}`, { name: `p${i}`, joined_at: 1_767_225_600 + i }) : messageSent(A, `msg-${i}`, 1_767_225_600 + i),
    );
    const answers = await Promise.all(deliveries.flatMap((d) => [postJson(urlA, "acme", d, AUTH), postJson(urlB, "acme", d, AUTH)]));
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(answers.filter((a) => a.json?.status === "stored")).toHaveLength(deliveries.length);
    expect(answers.filter((a) => a.json?.status === "duplicate")).toHaveLength(deliveries.length);

    expect(await count("SELECT count(*) AS n FROM webhook_deliveries WHERE repeat_count = 1")).toBe(deliveries.length);
    expect(await count("SELECT count(*) AS n FROM delivery_forward_queue")).toBe(deliveries.length);
    // The live state shows what either server received: every started call, with its joiner.
    expect(await count("SELECT count(*) AS n FROM live_sessions WHERE status = 'ongoing'")).toBe(40);
    expect(await count("SELECT count(*) AS n FROM live_occupants")).toBe(40);
  });

  it("with Postgres down both servers answer 503 + Retry-After, and take the delivery again once it is back", async () => {
    const before = await count("SELECT count(*) AS n FROM webhook_deliveries");
    postgres.pause();
    let answers: RawResponse[];
    try {
      // Past the one-second cache of the app's settings too: the store itself is refused.
      answers = [await postJson(urlA, "acme", messageSent(A, "while-down-1"), AUTH)];
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      answers.push(await postJson(urlB, "acme", messageSent(A, "while-down-2"), AUTH));
    } finally {
      postgres.start();
    }
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(Number(a.headers["retry-after"])).toBeGreaterThan(0);
      expect(a.json).toMatchObject({ error: { code: "unavailable" } });
    }
    expect(await count("SELECT count(*) AS n FROM webhook_deliveries")).toBe(before);

    // Back: the platform's next attempts are stored, once.
    await expect
      .poll(async () => (await postJson(urlA, "acme", messageSent(A, "while-down-1"), AUTH)).status, { timeout: 15_000, interval: 250 })
      .toBe(200);
    expect((await postJson(urlB, "acme", messageSent(A, "while-down-2"), AUTH)).json).toEqual({ status: "stored" });
    expect((await postJson(urlB, "acme", messageSent(A, "while-down-1"), AUTH)).json).toEqual({ status: "duplicate" });
    expect(await count("SELECT count(*) AS n FROM webhook_deliveries")).toBe(before + 2);
  });
});
