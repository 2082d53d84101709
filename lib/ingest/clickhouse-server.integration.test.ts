import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { openClickHouse, type ClickHouse } from "@/lib/clickhouse/client";
import { eventCountRow } from "@/lib/clickhouse/rows";
import type { CallStateV2 } from "@/lib/clickhouse/rows-v2";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { restartable, type RestartableServer } from "@/lib/clickhouse/test-restart";
import { CallWriterV2 } from "@/lib/clickhouse/writer-v2";
import { resetEnvForTests } from "@/lib/config/env";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";
import { clickHouseFacts, deliveryMix, missingInClickHouse, sqliteFacts } from "./clickhouse-forward-support";
import { getEventCounts } from "./queries";
import { HOOK_PASSWORD, HOOK_USER, TEST_SECRET, postJson } from "./test-harness";

/**
 * The production server (`npm start`: scripts/server.ts, the production build) in
 * ClickHouse mode, over HTTP: the forwarder it starts, the reports it answers from
 * ClickHouse (the engine CLICKHOUSE_URL selects), and `/api/health`, while ClickHouse is
 * up, stopped and back. Needs `npm run build` (CI builds first; elsewhere the suite
 * skips without a build, as server.test.ts does).
 */
const DATABASE = "server_test";

interface HealthAnswer {
  status: number;
  text: string;
  body: { status: string; clickhouse?: string; forwarding?: { pending: number; oldestAgeSeconds: number | null; failing: boolean } | null };
}

describe.skipIf(CLICKHOUSE_SKIP_REASON || SKIP_WITHOUT_BUILD)("the production server in ClickHouse mode", () => {
  let ch: TestClickHouse;
  let server: RestartableServer;
  let reader: ClickHouse;
  let db: Db;
  let dir = "";
  let app: TestServer;
  let base = "";
  let token = "";
  let appPk = 0;
  const SESSION = "ch-only-call";
  /**
   * Deliveries sent 60 at a time, each on its own connection: the server answers a client
   * address holding more than HTTP_MAX_CONNECTIONS_PER_ADDRESS (128) connections with 503.
   */
  const postAll = async (payloads: unknown[]) => {
    const out = [];
    for (let i = 0; i < payloads.length; i += 60) out.push(...(await Promise.all(payloads.slice(i, i + 60).map((d) => postJson(base, "acme", d)))));
    return out;
  };
  const get = (pathAndQuery: string) => fetch(`${base}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } });

  const health = async (): Promise<HealthAnswer> => {
    const res = await fetch(`${base}/api/health`);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as HealthAnswer["body"] };
  };

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server said: ${app.stderr().slice(-500)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    ch = await startClickHouse();
    server = restartable(ch, 0);
    process.env.AUTH_SECRET = TEST_SECRET;
    resetEnvForTests();
    dir = mkdtempSync(path.join(tmpdir(), "callboard-ch-server-"));
    const file = path.join(dir, "warehouse.db");
    db = openDatabase(file);
    appPk = (await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD })).pk;
    const admin = await createUser(db, { email: "ops@callboard.test", password: "ops-password-0001", role: "admin" });
    token = (await createApiToken(db, { userId: admin.id, name: "reports" })).token;
    app = await startTestServer({ env: { ...ch.env(DATABASE), DATABASE_PATH: file, AUTH_SECRET: TEST_SECRET } });
    base = app.base;
    reader = openClickHouse(ch.config(DATABASE));
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await reader?.close();
    await server?.stop();
    await ch?.stop();
    db?.$client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reports ClickHouse readable and forwards what the webhook route stores", async () => {
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: "ok", clickhouse: "ok" });
    const statuses = await postAll(deliveryMix("acme", 120, "up"));
    expect(statuses.every((r) => r.status === 200)).toBe(true);
    await until("the forwarder to drain", async () => (await health()).body.forwarding?.pending === 0);
    expect(await missingInClickHouse(db, reader)).toEqual([]);
    // The events report comes from ClickHouse: SQLite's counts (forwarded), and a bucket only ClickHouse holds.
    const now = Math.floor(Date.now() / 1000);
    await reader.insert("event_counts", [eventCountRow({ appPk, trigger: "only_in_clickhouse", bucketStart: now - (now % 900), count: 7 })]);
    // All time: joins and leaves are counted on the day of their own timestamp, which the
    // delivery mix sets in the past.
    const events = (await (await get("/api/v1/events")).json()) as { data: Array<{ trigger: string; count: number }>; meta: { from: number; to: number } };
    const local = getEventCounts(db, [appPk], { from: events.meta.from, to: events.meta.to, tz: "UTC" });
    expect(local.length).toBeGreaterThan(0);
    const sum = (rows: Array<{ trigger: string; count: number }>) => rows.filter((r) => r.trigger !== "only_in_clickhouse").reduce((n, r) => n + r.count, 0);
    expect(sum(events.data)).toBe(sum(local));
    expect(events.data.filter((r) => r.trigger === "only_in_clickhouse").map((r) => r.count)).toEqual([7]);
  });

  it("answers reports, their CSV and one call from ClickHouse (a call SQLite never held)", async () => {
    // Written as ClickHouse mode writes calls: schema v2 alone, through its writer (one server: its own only shard).
    const state: CallStateV2 = {
      appPk, sessionId: SESSION, version: 1, mid: null, type: "video", mode: "call", status: "ended", initiator: "ada", receiver: "bob", receiverType: "user",
      initiatedAt: 1_770_000_000, startedAt: 1_770_000_005, endedAt: 1_770_000_155, startAt: 1_770_000_005, platformHasRecording: false,
      audioX1000: 0, videoX1000: 2_500, durationX1000: 2_500, durationSeconds: 150, totalParticipants: 1, source: "sync", contentHash: null, firstSeenMs: 1, arrival: 1,
      participants: [{ seq: 0, uid: "ada", state: "ended", isJoined: true, audioX1000: 0, videoX1000: 2_500, durationX1000: 2_500, deviceId: null, joinedAt: 1_770_000_005, leftAt: 1_770_000_155, mid: null, raw: null }],
    };
    const written = await new CallWriterV2(reader, [{ client: reader, weight: 1 }]).write(appPk, [{ sessionId: SESSION, version: 1, next: state, raw: null }]);
    expect(written.written).toBe(1);
    expect(db.$client.prepare("SELECT count(*) FROM calls").pluck().get()).toBe(0);
    const list = (await (await get("/api/v1/calls?app=acme")).json()) as { data: Array<{ sessionId: string; totalVideoMinutes: number }>; meta: { pagination: { total: number } } };
    expect(list.meta.pagination.total).toBe(1);
    expect(list.data[0]).toMatchObject({ sessionId: SESSION, totalVideoMinutes: 2.5 });
    const csv = await get("/api/v1/calls?format=csv");
    expect(csv.status).toBe(200);
    expect(await csv.text()).toContain(SESSION);
    const detail = await get(`/api/v1/calls/${SESSION}?app=acme`);
    expect(detail.status).toBe(200);
    expect(await detail.json()).toMatchObject({ data: { sessionId: SESSION, participants: [{ uid: "ada" }] } });
  });

  it("keeps answering webhooks while ClickHouse is stopped, says 503 with the backlog, and catches up once it is back", async () => {
    await server.down();
    try {
      const statuses = await postAll(deliveryMix("acme", 240, "down"));
      expect(statuses.filter((r) => r.status !== 200)).toEqual([]);
      await until("health to report the outage", async () => (await health()).body.forwarding?.failing === true);
      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ status: "unavailable", clickhouse: "unreadable", forwarding: { pending: 240 + 40 + 20, failing: true } });
      expect(h.body.forwarding?.oldestAgeSeconds).not.toBeNull();
      expect(h.text).not.toContain(ch.password);
      expect(h.text).not.toContain(encodeURIComponent(ch.password));
      expect(h.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
      // Reports say so too: 503 with Retry-After (a CSV before its first byte), naming no server.
      for (const route of ["/api/v1/calls", "/api/v1/insights/totals", "/api/v1/calls?format=csv", `/api/v1/calls/${SESSION}?app=acme`, "/api/v1/events"]) {
        const res = await get(route);
        const text = await res.text();
        expect([route, res.status, res.headers.get("retry-after")]).toEqual([route, 503, "5"]);
        expect(JSON.parse(text)).toMatchObject({ error: { code: "analytics_unavailable" } });
        expect(text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
        expect(text).not.toContain(ch.password);
      }
    } finally {
      await server.up();
    }
    // The forwarder backs off up to a minute between attempts.
    await until("the backlog to drain", async () => (await health()).body.forwarding?.pending === 0, 90_000);
    const h = await health();
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: "ok", clickhouse: "ok", forwarding: { pending: 0, failing: false } });
    expect(await missingInClickHouse(db, reader)).toEqual([]);
    const local = sqliteFacts(db);
    expect(local.deliveries).toBe(360);
    // Beside SQLite's facts, ClickHouse holds the one bucket the events check put there.
    expect(await clickHouseFacts(reader)).toMatchObject({ ...local, counted: local.counted + 7, buckets: local.buckets + 1 });
    expect(app.stderr()).not.toContain(ch.password);
  }, 180_000);
});
