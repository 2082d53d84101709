import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";
import { messageSent, recordingGenerated } from "./fixtures";
import { AUTH, HOOK_PASSWORD, HOOK_USER, TEST_SECRET, postJson, send } from "./test-harness";

/**
 * The real server (`npm start`: scripts/server.ts, production build) over HTTP: the
 * ingest path answers in front of Next on the same port. Needs `npm run build` first;
 * `npm test` builds before the unit tests, so in CI (CI=true) a missing build fails
 * these tests; elsewhere they skip themselves without one.
 */
const ROOT = process.cwd();
const built = existsSync(path.join(ROOT, ".next", "BUILD_ID"));
const mustRun = process.env.CI === "true";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });

describe.skipIf(!built && !mustRun)("the production server", () => {
  let dir = "";
  let file = "";
  let child: ChildProcess | undefined;
  let base = "";
  /** Set when the server could not start for want of a build (another build may be rewriting .next). */
  let unavailable: string | undefined;
  let stderr = "";

  beforeAll(async () => {
    process.env.AUTH_SECRET = TEST_SECRET;
    resetEnvForTests();
    dir = mkdtempSync(path.join(tmpdir(), "callboard-ingest-server-"));
    file = path.join(dir, "warehouse.db");
    const db = openDatabase(file);
    addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: HOOK_USER, webhookPassword: HOOK_PASSWORD });
    db.$client.close();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/server.ts"], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: "production", PORT: String(port), DATABASE_PATH: file, AUTH_SECRET: TEST_SECRET, AUTH_TRUST_HOST: "true", SYNC_INTERVAL_SECONDS: "0", LOG_LEVEL: "warn" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) {
        if (/production build/i.test(stderr)) {
          unavailable = "no production build in .next";
          return;
        }
        throw new Error(`server exited with ${child.exitCode}: ${stderr.slice(0, 500)}`);
      }
      try {
        await fetch(`${base}/api/health`);
        break;
      } catch {
        if (Date.now() > deadline) throw new Error("server did not start within 60 s");
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores a delivery, answers its repeat as a duplicate, and refuses bad credentials", async (ctx) => {
    if (unavailable) {
      if (mustRun) throw new Error(unavailable);
      ctx.skip(unavailable);
    }
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

  it("leaves every other route to Next", async (ctx) => {
    if (unavailable) {
      if (mustRun) throw new Error(unavailable);
      ctx.skip(unavailable);
    }
    const health = await fetch(`${base}/api/health`);
    expect([200, 503]).toContain(health.status);
    expect(await health.json()).toHaveProperty("database");
  });

  it("has the deliveries durable in the warehouse once answered", (ctx) => {
    if (unavailable) {
      if (mustRun) throw new Error(unavailable);
      ctx.skip(unavailable);
    }
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
