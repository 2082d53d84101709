import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";
import { messageSent, recordingGenerated } from "./test-deliveries";
import { AUTH, HOOK_PASSWORD, HOOK_USER, TEST_SECRET, postJson, send } from "./test-harness";

/**
 * The real server (`npm start`: scripts/server.ts, production build) over HTTP: the
 * ingest path answers in front of Next on the same port (see lib/server/test-server.ts
 * for when it runs).
 */
describe.skipIf(SKIP_WITHOUT_BUILD)("the production server", () => {
  let dir = "";
  let file = "";
  let server: TestServer;
  let base = "";

  beforeAll(async () => {
    process.env.AUTH_SECRET = TEST_SECRET;
    resetEnvForTests();
    dir = mkdtempSync(path.join(tmpdir(), "callboard-ingest-server-"));
    file = path.join(dir, "warehouse.db");
    const db = openDatabase(file);
    await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD });
    db.$client.close();
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: TEST_SECRET } });
    base = server.base;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores a delivery, answers its repeat as a duplicate, and refuses bad credentials", async () => {
    const d = messageSent({ appId: "acme" }, "over-the-wire");
    expect((await postJson(base, "acme", d)).json).toEqual({ status: "stored" });
    expect((await postJson(base, "acme", d)).json).toEqual({ status: "duplicate" });
    expect((await postJson(base, "acme", recordingGenerated({ appId: "acme" }, "wire-call", 1_700_000_000))).status).toBe(200);
    const bad = await postJson(base, "acme", d, "Basic eDp5");
    expect(bad.status).toBe(401);
    expect(bad.headers["www-authenticate"]).toMatch(/^Basic/);
    expect((await send(base, { method: "GET", path: "/api/webhooks/acme" })).status).toBe(405);
    expect((await postJson(base, "ghost", d, AUTH)).status).toBe(404);
  });

  it("leaves every other route to Next", async () => {
    const health = await fetch(`${base}/api/health`);
    expect([200, 503]).toContain(health.status);
    expect(await health.json()).toHaveProperty("database");
  });

  it("has the deliveries durable in the warehouse once answered", () => {
    const sqlite = new Database(file, { readonly: true });
    try {
      const row = sqlite.prepare("SELECT count(*) n, sum(repeat_count) r FROM webhook_deliveries").get();
      expect(row).toEqual({ n: 2, r: 1 });
      expect(sqlite.prepare("SELECT count(*) n FROM recordings WHERE session_id = 'wire-call'").get()).toEqual({ n: 1 });
    } finally {
      sqlite.close();
    }
  });
});
