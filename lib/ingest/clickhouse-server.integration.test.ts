import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { openClickHouse, type ClickHouse } from "@/lib/clickhouse/client";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/testing";
import { restartable, type RestartableServer } from "@/lib/clickhouse/testing-restart";
import { resetEnvForTests } from "@/lib/config/env";
import { clickHouseFacts, deliveryMix, missingInClickHouse, sqliteFacts } from "./clickhouse-forward-support";
import { HOOK_PASSWORD, HOOK_USER, TEST_SECRET, postJson } from "./test-harness";

/**
 * The production server (`npm start`: scripts/server.ts, the production build) in
 * ClickHouse mode, over HTTP: the forwarder it starts, and `/api/health` while ClickHouse
 * is up, stopped and back. Needs `npm run build` (CI builds first; elsewhere the suite
 * skips without a build, as server.test.ts does).
 */
const ROOT = process.cwd();
const built = existsSync(path.join(ROOT, ".next", "BUILD_ID"));
const mustRun = process.env.CI === "true";
const DATABASE = "server_test";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });

interface HealthAnswer {
  status: number;
  text: string;
  body: { status: string; clickhouse?: string; forwarding?: { pending: number; oldestAgeSeconds: number | null; failing: boolean } | null };
}

describe.skipIf(CLICKHOUSE_SKIP_REASON || (!built && !mustRun))("the production server in ClickHouse mode", () => {
  let ch: TestClickHouse;
  let server: RestartableServer;
  let reader: ClickHouse;
  let db: Db;
  let dir = "";
  let child: ChildProcess | undefined;
  let base = "";
  let stderr = "";

  const health = async (): Promise<HealthAnswer> => {
    const res = await fetch(`${base}/api/health`);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as HealthAnswer["body"] };
  };

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server said: ${stderr.slice(-500)}`);
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
    addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/server.ts"], {
      cwd: ROOT,
      env: {
        ...process.env, ...ch.env(DATABASE), NODE_ENV: "production", PORT: String(port), DATABASE_PATH: file,
        AUTH_SECRET: TEST_SECRET, AUTH_TRUST_HOST: "true", SYNC_INTERVAL_SECONDS: "0", LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    await until("the server to answer", async () => {
      if (child?.exitCode !== null) throw new Error(`server exited with ${child?.exitCode}: ${stderr.slice(0, 500)}`);
      try {
        await fetch(`${base}/api/health`);
        return true;
      } catch {
        return false;
      }
    });
    reader = openClickHouse(ch.config(DATABASE));
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
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
    const statuses = await Promise.all(deliveryMix("acme", 120, "up").map((d) => postJson(base, "acme", d)));
    expect(statuses.every((r) => r.status === 200)).toBe(true);
    await until("the forwarder to drain", async () => (await health()).body.forwarding?.pending === 0);
    expect(await missingInClickHouse(db, reader)).toEqual([]);
  });

  it("keeps answering webhooks while ClickHouse is stopped, says 503 with the backlog, and catches up once it is back", async () => {
    await server.down();
    try {
      const statuses = await Promise.all(deliveryMix("acme", 240, "down").map((d) => postJson(base, "acme", d)));
      expect(statuses.filter((r) => r.status !== 200)).toEqual([]);
      await until("health to report the outage", async () => (await health()).body.forwarding?.failing === true);
      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ status: "unavailable", clickhouse: "unreadable", forwarding: { pending: 240 + 40, failing: true } });
      expect(h.body.forwarding?.oldestAgeSeconds).not.toBeNull();
      expect(h.text).not.toContain(ch.password);
      expect(h.text).not.toContain(encodeURIComponent(ch.password));
      expect(h.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
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
    expect(await clickHouseFacts(reader)).toMatchObject(local);
    expect(stderr).not.toContain(ch.password);
  }, 180_000);
});
