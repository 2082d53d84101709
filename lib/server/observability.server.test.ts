import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
import { parseMetrics, sampleValue, type Sample } from "@/lib/testing/prometheus-text";
import { freePort, SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * The production server as an operator runs it (issue 27 items 2, 3 and 5): real traffic
 * of every kind (webhooks on the lean path, a script's reports on the lean API path,
 * Next's routes and proxy), then /metrics scraped and read with a Prometheus text
 * parser, the access log read line by line, and the two health probes.
 */
const SECRET = "observability-suite-secret-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const HOOK_PASSWORD = "hook-password-secret-99";
const HOUR_MS = 3_600_000;

interface Seeded {
  token: string;
}

async function seedWarehouse(file: string): Promise<Seeded> {
  process.env.AUTH_SECRET = SECRET;
  resetEnvForTests();
  const db = openDatabase(file);
  try {
    addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: HOOK_PASSWORD });
    addApp(db, { appId: "beta", name: "Beta", region: "eu", apiKey: "key-beta-0001" });
    const user = await createUser(db, { email: "reader@callboard.test", password: "reader-password-1", role: "viewer", apps: ["acme", "beta"] });
    const token = (await createApiToken(db, { userId: user.id, name: "reports" })).token;
    // acme: two good syncs (the last 5 hours ago) and a failed one; beta synced a minute ago.
    const now = Date.now();
    const run = db.$client.prepare(
      "INSERT INTO sync_runs (app_pk, kind, trigger, status, started_ms, finished_ms, inserted, updated) VALUES ((SELECT pk FROM apps WHERE app_id = ?), 'incremental', 'cli', ?, ?, ?, ?, ?)",
    );
    run.run("acme", "succeeded", now - 6 * HOUR_MS, now - 6 * HOUR_MS + 1000, 5, 2);
    run.run("acme", "succeeded", now - 5 * HOUR_MS, now - 5 * HOUR_MS + 1000, 4, 3);
    run.run("acme", "failed", now - HOUR_MS, now - HOUR_MS + 1000, 0, 0);
    run.run("beta", "succeeded", now - 60_000, now - 59_000, 10, 0);
    db.$client.prepare("UPDATE apps SET last_successful_sync_ms = ? WHERE app_id = 'acme'").run(now - 5 * HOUR_MS + 1000);
    db.$client.prepare("UPDATE apps SET last_successful_sync_ms = ? WHERE app_id = 'beta'").run(now - 59_000);
    return { token };
  } finally {
    db.$client.close();
  }
}

let n = 0;
function webhook(base: string, app: string, authorization: string, id = `m-${++n}`): Promise<Response> {
  const body = JSON.stringify(messageSent({ appId: app }, id)); // the same id, the same body: a repeat
  return fetch(`${base}/api/webhooks/${app}`, { method: "POST", headers: { authorization, "content-type": "application/json" }, body });
}

async function scrape(base: string, token = METRICS_TOKEN): Promise<Sample[]> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parseMetrics(await res.text());
}

interface AccessLine {
  msg: string;
  requestId: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  caller: string;
}

function accessLines(server: TestServer): AccessLine[] {
  return server
    .stdout()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as AccessLine)
    .filter((l) => l.msg === "request");
}

describe.skipIf(SKIP_WITHOUT_BUILD)("metrics, access log, request ids and health probes (production server)", () => {
  let dir = "";
  let file = "";
  let seeded: Seeded;
  let server: TestServer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-observability-"));
    file = path.join(dir, "warehouse.db");
    seeded = await seedWarehouse(file);
    server = await startTestServer({
      env: { DATABASE_PATH: file, AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off", METRICS_TOKEN, SYNC_MAX_AGE_SECONDS: "3600", LOG_LEVEL: "info" },
      stdout: true,
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts real traffic by route template and status, webhooks by app and outcome, reports, syncs and more", async () => {
    const base = server.base;
    const hook = basicAuthHeader("hook", HOOK_PASSWORD);
    const before = await scrape(base);
    const count = (samples: Sample[], labels: Record<string, string>) => sampleValue(samples, "callboard_http_request_duration_seconds_count", labels) ?? 0;

    for (let i = 0; i < 3; i++) expect((await webhook(base, "acme", hook)).status).toBe(200);
    expect((await webhook(base, "acme", hook, "m-1")).status).toBe(200); // a repeat
    expect((await webhook(base, "acme", basicAuthHeader("hook", "wrong"))).status).toBe(401);
    expect((await webhook(base, "no-such-app-x7", hook)).status).toBe(404);
    const bearer = { authorization: `Bearer ${seeded.token}` };
    for (let i = 0; i < 2; i++) expect((await fetch(`${base}/api/v1/calls?app=acme`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/calls/session-secret-42?app=acme`, { headers: bearer })).status).toBe(404);

    // A request is counted when the server sees its answer out, a moment after the client has it.
    await new Promise((r) => setTimeout(r, 200));
    const after = await scrape(base);
    const delta = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
    expect(delta({ method: "POST", route: "/api/webhooks/[appId]", status: "200" })).toBe(4);
    expect(delta({ method: "POST", route: "/api/webhooks/[appId]", status: "401" })).toBe(1);
    expect(delta({ method: "POST", route: "/api/webhooks/[appId]", status: "404" })).toBe(1);
    expect(delta({ method: "GET", route: "/api/v1/calls", status: "200" })).toBe(2);
    expect(delta({ method: "GET", route: "/api/v1/calls/[sessionId]", status: "404" })).toBe(1);
    expect(delta({ method: "GET", route: "/metrics", status: "200" })).toBe(1); // the first scrape
    // The histogram's buckets add up: every request falls in +Inf.
    const inf = sampleValue(after, "callboard_http_request_duration_seconds_bucket", { method: "GET", route: "/api/v1/calls", status: "200", le: "+Inf" });
    expect(inf).toBe(count(after, { method: "GET", route: "/api/v1/calls", status: "200" }));

    // No label carries a raw path or an id a client made up.
    const labelValues = after.flatMap((s) => Object.values(s.labels));
    expect(labelValues.some((v) => v.includes("session-secret-42") || v.includes("no-such-app-x7"))).toBe(false);

    const deliveries = (outcome: string) => sampleValue(after, "callboard_webhook_deliveries_total", { app: "acme", outcome });
    expect(deliveries("accepted")).toBe(3);
    expect(deliveries("repeated")).toBe(1);
    expect(deliveries("rejected")).toBe(1);
    expect(after.filter((s) => s.name === "callboard_webhook_deliveries_total" && s.labels.app !== "acme")).toEqual([]);

    expect(sampleValue(after, "callboard_report_duration_seconds_count", { report: "calls", engine: "memory", format: "json" })).toBeGreaterThanOrEqual(2);

    expect(sampleValue(after, "callboard_syncs_total", { app: "acme", outcome: "succeeded" })).toBe(2);
    expect(sampleValue(after, "callboard_syncs_total", { app: "acme", outcome: "failed" })).toBe(1);
    expect(sampleValue(after, "callboard_syncs_total", { app: "beta", outcome: "succeeded" })).toBe(1);
    expect(sampleValue(after, "callboard_calls_synced_total", { app: "acme" })).toBe(14);
    expect(sampleValue(after, "callboard_last_good_sync_age_seconds", { app: "acme" })).toBeGreaterThanOrEqual(5 * 3600 - 60);
    expect(sampleValue(after, "callboard_last_good_sync_age_seconds", { app: "beta" })).toBeLessThan(3600);
    expect(sampleValue(after, "callboard_sync_stale", { app: "acme" })).toBe(1);
    expect(sampleValue(after, "callboard_sync_stale", { app: "beta" })).toBe(0);
    expect(sampleValue(after, "callboard_clickhouse_forward_backlog")).toBeUndefined(); // SQLite mode: nothing is forwarded
    expect(sampleValue(after, "callboard_alert_outbox", { status: "pending" })).toBe(0);
    expect(sampleValue(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(sampleValue(after, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
  });

  it("refuses a scrape without the METRICS_TOKEN, with a JSON error that names the request", async () => {
    const tries: Array<Record<string, string>> = [{}, { authorization: "Bearer wrong-token-0123456789" }, { authorization: `Basic ${METRICS_TOKEN}` }];
    for (const headers of tries) {
      const res = await fetch(`${server.base}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = (await res.json()) as { error: { code: string; message: string; requestId: string } };
      expect(body.error.code).toBe("unauthorized");
      expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
      expect(JSON.stringify(body)).not.toContain(METRICS_TOKEN);
    }
  });

  it("echoes a request id in X-Request-Id and in every kind of error body, and logs one line per request without a secret", async () => {
    const base = server.base;
    const mine = "client-chosen-id-0001";
    const cases: Array<{ what: string; res: Promise<Response>; status: number }> = [
      { what: "Next route handler", res: fetch(`${base}/api/v1/calls/nope?app=acme`, { headers: { authorization: `Bearer ${seeded.token}`, "x-request-id": mine } }), status: 404 },
      { what: "lean API path, bad token", res: fetch(`${base}/api/v1/calls`, { headers: { authorization: "Bearer cb_not-a-real-token" } }), status: 401 },
      { what: "Next proxy, no session", res: fetch(`${base}/api/v1/users`), status: 401 },
      { what: "lean webhook path", res: webhook(base, "acme", basicAuthHeader("hook", "wrong")), status: 401 },
      { what: "bad filter", res: fetch(`${base}/api/v1/calls?type=nonsense`, { headers: { authorization: `Bearer ${seeded.token}` } }), status: 400 },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const res = await c.res;
      expect(res.status, c.what).toBe(c.status);
      const id = res.headers.get("x-request-id");
      expect(id, c.what).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
      const body = (await res.json()) as { error: { requestId?: string } };
      expect(body.error.requestId, c.what).toBe(id);
      ids.push(id!);
    }
    expect(ids[0]).toBe(mine);
    expect(new Set(ids).size).toBe(ids.length);
    // A hostile id is not echoed: a new one is made.
    const odd = await fetch(`${base}/api/health/live`, { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    // The access log: one line each, route template, status, duration, caller kind.
    await new Promise((r) => setTimeout(r, 200));
    const lines = accessLines(server);
    const byId = (id: string) => lines.filter((l) => l.requestId === id);
    expect(byId(mine)).toEqual([expect.objectContaining({ method: "GET", route: "/api/v1/calls/[sessionId]", status: 404, caller: "token" })]);
    expect(byId(ids[1]!)).toEqual([expect.objectContaining({ route: "/api/v1/calls", status: 401, caller: "token" })]);
    expect(byId(ids[2]!)).toEqual([expect.objectContaining({ route: "/api/v1/users", status: 401, caller: "anonymous" })]);
    expect(byId(ids[3]!)).toEqual([expect.objectContaining({ method: "POST", route: "/api/webhooks/[appId]", status: 401, caller: "webhook" })]);
    for (const l of byId(mine)) expect(typeof l.durationMs).toBe("number");
    // Never a token, a password, a cookie or a query string.
    const log = server.stdout();
    for (const secret of [seeded.token, "cb_not-a-real-token", HOOK_PASSWORD, "wrong", METRICS_TOKEN, "app=acme", "type=nonsense"]) {
      expect(log.includes(secret), secret).toBe(false);
    }
  });

  it("liveness stays 200 while readiness is 503 under a held write lock, and readiness lists stale syncs", async () => {
    const base = server.base;
    const ready = await fetch(`${base}/api/health`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { status: string; staleSyncs: Array<{ app: string; ageSeconds: number; lastGoodSyncAt: string }> };
    expect(body.status).toBe("ok");
    expect(body.staleSyncs.map((s) => s.app)).toEqual(["acme"]);
    expect(body.staleSyncs[0]!.ageSeconds).toBeGreaterThan(3600);

    const locker = new Database(file);
    try {
      locker.exec("BEGIN EXCLUSIVE"); // a long sqlite3 session holding the write lock
      const busy = await fetch(`${base}/api/health`);
      expect(busy.status).toBe(503);
      const live = await fetch(`${base}/api/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: "ok" });
      expect(live.headers.get("cache-control")).toBe("no-store");
    } finally {
      locker.exec("ROLLBACK");
      locker.close();
    }
  });

  it("refuses `warehouse restore` while this server has the warehouse open", async () => {
    const backup = path.join(dir, "backup.db");
    const run = (args: string[]) =>
      new Promise<{ status: number | null; out: string }>((resolve) => {
        const child = spawn(path.join("node_modules", ".bin", "tsx"), ["scripts/warehouse.ts", ...args], {
          env: { ...process.env, DATABASE_PATH: file, AUTH_SECRET: SECRET, LOG_LEVEL: "warn" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        child.stdout.on("data", (c: Buffer) => (out += c.toString()));
        child.stderr.on("data", (c: Buffer) => (out += c.toString()));
        child.once("close", (status) => resolve({ status, out }));
      });
    expect((await run(["backup", backup])).status).toBe(0);
    const refused = await run(["restore", backup]);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain("is open in another process");
    expect((await fetch(`${server.base}/api/health`)).status).toBe(200);
  });
});

describe.skipIf(SKIP_WITHOUT_BUILD)("metrics on METRICS_PORT (production server)", () => {
  let dir = "";
  let server: TestServer;
  let metricsPort = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-metrics-port-"));
    const file = path.join(dir, "warehouse.db");
    await seedWarehouse(file);
    metricsPort = await freePort();
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off", METRICS_PORT: String(metricsPort) } });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves /metrics on its own port without a token, and not on the main port", async () => {
    const main = await fetch(`${server.base}/metrics`);
    expect(main.status).toBe(404);
    expect(((await main.json()) as { error: { code: string } }).error.code).toBe("not_found");
    await fetch(`${server.base}/api/health`);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const samples = parseMetrics(await res.text());
    expect(sampleValue(samples, "callboard_http_request_duration_seconds_count", { method: "GET", route: "/api/health", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, "callboard_http_request_duration_seconds_count", { method: "GET", route: "/metrics", status: "404" })).toBe(1);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/health`)).status).toBe(404);
  });
});
