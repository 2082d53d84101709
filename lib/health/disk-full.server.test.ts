import { spawnSync } from "node:child_process";
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { basicAuthHeader } from "@/lib/ingest/auth";
import { messageSent } from "@/lib/ingest/fixtures";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";

/**
 * The production server with its warehouse on a small file system that fills during
 * webhook load, and locked by another process past the busy timeout (issue 12, items
 * 8 and 9, the webhook / report / health side). The small file system is a real tmpfs,
 * mounted in a mount namespace of the server's own (`unshare -rm`: no privileges
 * needed where user namespaces are enabled); the test reaches its files through
 * /proc/<pid>/root. Where that is not possible the disk-full half skips itself, and
 * lib/ingest/store-failures.test.ts still covers it through the real driver.
 */
const SECRET = "disk-full-suite-secret-0123456789abcdef0";
const AUTH = basicAuthHeader("hook", "hook-password");

function canMountTmpfs(): boolean {
  if (process.platform !== "linux") return false;
  const probe = mkdtempSync(path.join(tmpdir(), "callboard-tmpfs-probe-"));
  try {
    const r = spawnSync("unshare", ["-rm", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs "${probe}"`], { stdio: "ignore" });
    return r.status === 0;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** A warehouse with one app (Basic auth) and a viewer's API token for the reports. */
async function seedWarehouse(file: string): Promise<string> {
  process.env.AUTH_SECRET = SECRET;
  resetEnvForTests();
  const db = openDatabase(file);
  try {
    addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: "hook-password" });
    const user = await createUser(db, { email: "reader@callboard.test", password: "reader-password-1", role: "viewer", apps: ["acme"] });
    return (await createApiToken(db, { userId: user.id, name: "reports" })).token;
  } finally {
    db.$client.close();
  }
}

let n = 0;
function delivery(tag: string, padding = 0): { id: string; body: string } {
  n += 1;
  const id = `${tag}-${n}`;
  return { id, body: JSON.stringify(messageSent({ appId: "acme" }, id, Math.floor(Date.now() / 1000), "p".repeat(padding))) };
}

async function post(base: string, body: string): Promise<Response> {
  return fetch(`${base}/api/webhooks/acme`, { method: "POST", headers: { authorization: AUTH, "content-type": "application/json" }, body });
}

/** Sends each again, honouring Retry-After, until it is answered 200 (bounded). */
async function resendUntilStored(base: string, pending: Array<{ id: string; body: string }>): Promise<void> {
  for (const d of pending) {
    for (let attempt = 0; ; attempt++) {
      const res = await post(base, d.body);
      if (res.status === 200) break;
      expect(res.status).toBe(503);
      if (attempt > 30) throw new Error(`${d.id} still refused after ${attempt} tries`);
      await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after")) * 1000));
    }
  }
}

async function health(base: string): Promise<{ status: number; body: { status: string; database: string; reason?: string; message?: string } }> {
  const res = await fetch(`${base}/api/health`);
  return { status: res.status, body: (await res.json()) as { status: string; database: string; reason?: string } };
}

/** Reports keep answering from what is stored, for a script with a token. */
async function reportsAnswer(base: string, token: string): Promise<void> {
  for (const url of ["/api/v1/events?days=7", "/api/v1/usage/apps", "/api/v1/events/deliveries"]) {
    const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status, url).toBe(200);
  }
}

function checkWarehouse(file: string, acked: Set<string>, refusedNotStored: Array<{ id: string }>): void {
  const sqlite = new Database(file, { readonly: true });
  try {
    expect(sqlite.pragma("integrity_check", { simple: true })).toBe("ok");
    const ids = new Set(sqlite.prepare("SELECT json_extract(body, '$.data.message.id') id FROM webhook_deliveries").pluck().all() as string[]);
    for (const id of acked) expect(ids.has(id), `${id} was answered 200 but is not stored`).toBe(true);
    for (const d of refusedNotStored) expect(ids.has(d.id), `${d.id} was answered 503 but is stored`).toBe(false);
    const t = sqlite.prepare("SELECT (SELECT count(*) FROM webhook_deliveries) d, (SELECT coalesce(sum(count), 0) FROM event_counts) c, (SELECT coalesce(sum(repeat_count), 0) FROM webhook_deliveries) r").get() as { d: number; c: number; r: number };
    expect(t.c).toBe(t.d); // each stored delivery counted once
  } finally {
    sqlite.close();
  }
}

/**
 * A copy of a warehouse the server is not writing to right now (database and WAL):
 * SQLite resolves /proc/<pid>/root to the test's own root, so it cannot open the
 * server's file by that path; the file system calls can.
 */
function snapshot(file: string, into: string): string {
  mkdirSync(into, { recursive: true });
  const copy = path.join(into, "warehouse.db");
  for (const suffix of ["", "-wal"]) {
    rmSync(copy + suffix, { force: true });
    if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix);
  }
  return copy;
}

describe.skipIf(SKIP_WITHOUT_BUILD || !canMountTmpfs())("a warehouse on a file system that fills up", () => {
  let dir = "";
  let mount = "";
  let server: TestServer;
  let token = "";
  /** The warehouse as the server sees it (inside its mount namespace). */
  const inServer = (p: string) => `/proc/${server.child.pid}/root${p}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-disk-full-"));
    mount = path.join(dir, "small");
    mkdirSync(mount);
    const seed = path.join(dir, "seed.db");
    token = await seedWarehouse(seed);
    server = await startTestServer({
      env: { DATABASE_PATH: path.join(mount, "warehouse.db"), AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off", SEED: seed, SMALL: mount },
      // 16 MB of tmpfs, the seeded warehouse copied in, then the server.
      wrap: ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=16m tmpfs "$SMALL" && cp "$SEED" "$SMALL/warehouse.db" && exec "$0" "$@"'],
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("never answers 200 unless stored, says so on /api/health, keeps reports and data, and recovers once space is freed", async () => {
    const base = server.base;
    const acked = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const d = delivery("before");
      expect((await post(base, d.body)).status).toBe(200);
      acked.add(d.id);
    }
    expect((await health(base)).status).toBe(200);

    // Fill the file system.
    const filler = inServer(path.join(mount, "filler"));
    const fd = openSync(filler, "w");
    const chunk = Buffer.alloc(256 * 1024, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    } finally {
      closeSync(fd);
    }

    // Webhook load on a full disk: 200 only for what is stored.
    const refused: Array<{ id: string; body: string }> = [];
    for (let i = 0; i < 400 && refused.length < 15; i++) {
      const d = delivery("while-full", 4_000);
      const res = await post(base, d.body);
      expect([200, 503]).toContain(res.status);
      if (res.status === 200) acked.add(d.id);
      else {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
        refused.push(d);
      }
    }
    expect(refused.length).toBe(15);
    const h = await health(base);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ status: "unavailable", database: "not_writable", reason: "disk_full" });
    await reportsAnswer(base, token);
    checkWarehouse(snapshot(inServer(path.join(mount, "warehouse.db")), path.join(dir, "copy-full")), acked, refused);

    // Space is freed: no repair, the platform's retries are stored once each.
    unlinkSync(filler);
    await resendUntilStored(base, refused);
    for (const d of refused) acked.add(d.id);
    const more = delivery("after");
    expect((await post(base, more.body)).status).toBe(200);
    acked.add(more.id);
    expect(await health(base)).toMatchObject({ status: 200, body: { status: "ok", database: "ok" } });
    checkWarehouse(snapshot(inServer(path.join(mount, "warehouse.db")), path.join(dir, "copy-after")), acked, []);
  });
});

describe.skipIf(SKIP_WITHOUT_BUILD)("a warehouse locked by another process", () => {
  let dir = "";
  let file = "";
  let server: TestServer;
  let token = "";

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-locked-"));
    file = path.join(dir, "warehouse.db");
    token = await seedWarehouse(file);
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off" } });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers webhooks 503 + Retry-After, keeps reports answering, says so on /api/health, and recovers when the lock goes", async () => {
    const base = server.base;
    const acked = new Set<string>();
    const first = delivery("before-lock");
    expect((await post(base, first.body)).status).toBe(200);
    acked.add(first.id);

    // A long sqlite3 session or a backup: the write lock held well past the 5 s busy timeout.
    const locker = new Database(file);
    try {
      locker.exec("BEGIN EXCLUSIVE");
      locker.prepare("INSERT INTO audit_log (at_ms, actor_email, action, target) VALUES (?, 'sqlite3', 'lock', 'test')").run(Date.now());
      const refused: Array<{ id: string; body: string }> = [];
      for (let i = 0; i < 6; i++) {
        const d = delivery("locked");
        const res = await post(base, d.body);
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
        refused.push(d);
      }
      const h = await health(base);
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ database: "not_writable", reason: "locked" });
      await reportsAnswer(base, token);
      locker.exec("COMMIT");

      await resendUntilStored(base, refused);
      for (const d of refused) acked.add(d.id);
      expect(await health(base)).toMatchObject({ status: 200, body: { status: "ok" } });
      checkWarehouse(file, acked, []);
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
    }
  });
});
