import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { migrateClickHouse, openClickHouse, type ClickHouse } from "@/lib/clickhouse";
import type { CallStateV2 } from "@/lib/clickhouse/rows-v2";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { CallWriterV2, openShardsV2 } from "@/lib/clickhouse/writer-v2";
import { REPORT_ROUTES } from "@/lib/analytics/report-registry";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";

/**
 * Issue 30 item 5: the production server on a real two-shard ClickHouse 18.16 cluster,
 * one shard frozen with SIGSTOP (its sockets open, answering nothing). Every report and
 * the calls CSV answer 503 `analytics_unavailable` with Retry-After once
 * CLICKHOUSE_QUERY_TIMEOUT_SECONDS has passed — not after minutes. (Each query is also
 * killed on the server that took it: lib/clickhouse/query-deadline.integration.test.ts.)
 */
const SECRET = "frozen-shard-suite-secret-0123456789abcdef";
process.env.AUTH_SECRET = SECRET;
const DATABASE = "callboard_frozen";
const TIMEOUT_SECONDS = 3;

describe.skipIf(CLICKHOUSE_SKIP_REASON || SKIP_WITHOUT_BUILD)("a frozen ClickHouse shard", () => {
  let cluster: TestClickHouse;
  let reader: ClickHouse;
  let db: Db;
  let dir = "";
  let app: TestServer;
  let token = "";

  const get = (pathAndQuery: string) => fetch(`${app.base}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(60_000) });

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    await migrateClickHouse(cluster.config(DATABASE));
    dir = mkdtempSync(path.join(tmpdir(), "callboard-frozen-shard-"));
    const file = path.join(dir, "warehouse.db");
    db = openDatabase(file);
    const appPk = (await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" })).pk;
    const admin = await createUser(db, { email: "ops@frozen.test", password: "ops-password-0001", role: "admin" });
    token = (await createApiToken(db, { userId: admin.id, name: "reports" })).token;
    reader = openClickHouse(cluster.config(DATABASE));
    // Calls on both shards, written as ClickHouse mode writes them: schema v2 through its writer (each shard's local tables).
    const shards = await openShardsV2(reader, cluster.config(DATABASE));
    const state = (i: number): CallStateV2 => ({
      appPk, sessionId: `frozen-${i}`, version: 1, mid: null, type: i % 2 ? "video" : "audio", mode: "call", status: "ended", initiator: "ada", receiver: "bob", receiverType: "user",
      initiatedAt: 1_770_000_000 + i * 60, startedAt: 1_770_000_005 + i * 60, endedAt: 1_770_000_065 + i * 60, startAt: 1_770_000_005 + i * 60, platformHasRecording: false,
      audioX1000: 1_000, videoX1000: 1_000, durationX1000: 1_000, durationSeconds: 60, totalParticipants: 1, source: "sync", contentHash: null, firstSeenMs: 1, arrival: 1,
      participants: [{ seq: 0, uid: `u${i % 5}`, state: "ended", isJoined: true, audioX1000: 1_000, videoX1000: 1_000, durationX1000: 1_000, deviceId: null, joinedAt: 1_770_000_005 + i * 60, leftAt: 1_770_000_065 + i * 60, mid: null, raw: null }],
    });
    try {
      await new CallWriterV2(reader, shards).write(appPk, Array.from({ length: 40 }, (_, i) => ({ sessionId: `frozen-${i}`, version: 1, next: state(i), raw: null })));
      expect((await shards[1].client.rows<{ n: number }>(`SELECT count() AS n FROM ${DATABASE}.calls_v2_local`))[0].n).toBeGreaterThan(0);
    } finally {
      await Promise.all(shards.map((s) => s.client.close()));
    }
    app = await startTestServer({ env: { ...cluster.env(DATABASE), DATABASE_PATH: file, AUTH_SECRET: SECRET, CLICKHOUSE_QUERY_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) } });
  }, 180_000);

  afterAll(async () => {
    cluster?.freeze(1, false);
    await app?.stop();
    await reader?.close();
    await cluster?.stop();
    db?.$client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers every report while both shards answer", async () => {
    for (const route of Object.keys(REPORT_ROUTES)) expect((await get(`${route}?app=acme`)).status, route).toBe(200);
  });

  it("answers 503 analytics_unavailable with Retry-After to every report and the calls CSV within the deadline", async () => {
    cluster.freeze(1, true);
    try {
      for (const target of [...Object.keys(REPORT_ROUTES).map((r) => `${r}?app=acme`), "/api/v1/calls?format=csv", "/api/v1/usage/apps?format=csv"]) {
        const startedAt = Date.now();
        const res = await get(target);
        const tookMs = Date.now() - startedAt;
        expect(res.status, target).toBe(503);
        expect(res.headers.get("retry-after"), target).toBe("5");
        expect(await res.json(), target).toMatchObject({ error: { code: "analytics_unavailable" } });
        // The deadline, and a little for the request itself (without one: no answer in 90 s).
        expect(tookMs, target).toBeLessThan(TIMEOUT_SECONDS * 1000 + 5_000);
      }
    } finally {
      cluster.freeze(1, false);
    }
  }, 180_000);

  it("answers again once the shard is back", async () => {
    await vi.waitFor(async () => expect((await get("/api/v1/usage/apps?app=acme")).status).toBe(200), { timeout: 30_000, interval: 500 });
    const body = (await (await get("/api/v1/usage/apps?app=acme")).json()) as { data: Array<{ calls: number }> };
    expect(body.data[0].calls).toBe(40);
  });
});
