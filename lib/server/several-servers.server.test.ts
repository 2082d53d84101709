import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { addApp } from "@/lib/apps/registry";
import { startReceiver, type Receiver } from "@/lib/alerts/test-receiver";
import { useTestEnv } from "@/lib/auth/test-support";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { openClickHouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { spawnEmulator, type SpawnedEmulator } from "@/lib/emulator/test-emulator";
import { basicAuthHeader } from "@/lib/ingest/auth";
import { messageSent, participantJoined, recordingGenerated } from "@/lib/ingest/test-deliveries";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * Several Callboard servers over one Postgres and a two-shard ClickHouse (issue 26): two
 * production servers (scripts/server.ts on the build) with the same DATABASE_URL,
 * CLICKHOUSE_URL and CLICKHOUSE_CLUSTER, each on its own loopback port, as behind a load
 * balancer. Sign-out, a revoked token and a removed user on A are refused by B at its
 * next request; Postgres stopped gives 503 + Retry-After on pages, webhooks, reports and
 * health of both, and both answer again once it is back; webhooks sent to both while one
 * is SIGKILLed are each, when answered 200, in Postgres and in ClickHouse once.
 */
const SECRET = "several-servers-suite-secret-0123456789abcdef";
const DATABASE = "several_servers";
const HOOK = basicAuthHeader("hook", "hook-password");
const ADMIN = { email: "admin@callboard.test", password: "admin-password-0001" };

/** A tiny cookie jar: what a browser keeps between next-auth's answers. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1);
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  has(name: string): boolean {
    return this.cookies.has(name);
  }
}

/** Signs in with a password through next-auth's credentials route on `base`, as the sign-in form does. */
async function signIn(base: string, email: string, password: string): Promise<Jar> {
  const jar = new Jar();
  const csrf = await fetch(`${base}/api/auth/csrf`);
  jar.take(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${base}/` }),
  });
  jar.take(res);
  if (!jar.has("authjs.session-token")) throw new Error(`sign-in on ${base} gave no session (${res.status})`);
  return jar;
}

/** Signs out through next-auth's route on `base` (it records the session as ended). */
async function signOut(base: string, jar: Jar): Promise<void> {
  const csrf = await fetch(`${base}/api/auth/csrf`, { headers: { cookie: jar.header() } });
  jar.take(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar.header() },
    body: new URLSearchParams({ csrfToken, callbackUrl: `${base}/` }),
  });
  expect([200, 302, 303]).toContain(res.status);
}

async function status(base: string, url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${base}${url}`, { headers, redirect: "manual" });
  await res.arrayBuffer();
  return res.status;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe.skipIf(SKIP_WITHOUT_BUILD || POSTGRES_SKIP_REASON || CLICKHOUSE_SKIP_REASON)("several Callboard servers over one Postgres and a two-shard ClickHouse", { timeout: 240_000 }, () => {
  let postgres: TestPostgres;
  let ch: TestClickHouse;
  let emu: SpawnedEmulator;
  let pgDb: PgDb;
  let dir = "";
  let serverEnv: Record<string, string>;
  const servers: TestServer[] = [];
  let a: TestServer;
  let b: TestServer;
  let adminToken = "";
  const viewer = { id: 0, token: "", tokenId: 0, otherToken: "" };

  const startOne = () => startTestServer({ env: serverEnv, nodeImport: true }).then((s) => (servers.push(s), s));

  beforeAll(async () => {
    useTestEnv({ AUTH_SECRET: SECRET, LOG_LEVEL: "silent" });
    [postgres, ch, emu] = await Promise.all([
      startPostgres(),
      startClickHouse({ shards: 2 }),
      spawnEmulator({ seed: 26, now: Math.floor(Date.now() / 1000), apps: [{ appId: "gamma", count: 400 }] }),
    ]);
    const url = await postgres.createDatabase(DATABASE);
    await migratePostgres(parsePostgresConfig(url));
    await migrateClickHouse(ch.config(DATABASE));
    pgDb = openPostgres(parsePostgresConfig(url), { max: 4 });
    const state = stateDbOfPostgres(pgDb);
    await addApp(state, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: "hook-password" });
    const admin = await createUser(state, { ...ADMIN, role: "admin" });
    adminToken = (await createApiToken(state, { userId: admin.id, name: "ops" })).token;
    const v = await createUser(state, { email: "viewer@callboard.test", password: "viewer-password-0001", role: "viewer", apps: ["acme"] });
    const first = await createApiToken(state, { userId: v.id, name: "reports" });
    Object.assign(viewer, { id: v.id, token: first.token, tokenId: first.view.id, otherToken: (await createApiToken(state, { userId: v.id, name: "second" })).token });
    dir = mkdtempSync(path.join(tmpdir(), "callboard-several-"));
    serverEnv = {
      DATABASE_URL: url,
      ...ch.env(DATABASE),
      // Never used with DATABASE_URL: a file here would mean a server kept state of its own.
      DATABASE_PATH: path.join(dir, "must-not-exist.db"),
      AUTH_SECRET: SECRET,
      ANALYTICS_WORKER: "off",
      // Both servers evaluate alert rules every second, and a window as soon as it closes.
      ALERTS_INTERVAL_SECONDS: "1",
      ALERTS_DELAY_SECONDS: "0",
      METRICS_TOKEN: "metrics-token-0123456789",
    };
    // Both at once: their migrations take turns under Postgres's advisory lock.
    [a, b] = await Promise.all([startOne(), startOne()]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await emu?.stop();
    await pgDb?.$client.end();
    await ch?.stop();
    await postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves from the shared state on both: health, a report and the same user", async () => {
    for (const s of [a, b]) {
      const health = await fetch(`${s.base}/api/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok", database: "ok", clickhouse: "ok" });
      const apps = await fetch(`${s.base}/api/v1/usage/apps`, { headers: bearer(viewer.token) });
      expect(apps.status).toBe(200);
      expect(((await apps.json()) as { data: Array<{ app: string }> }).data.map((r) => r.app)).toEqual(["acme"]);
    }
    const routes = [
      "/api/v1/calls", "/api/v1/usage/participants", "/api/v1/usage/daily", "/api/v1/recordings",
      "/api/v1/events", "/api/v1/events/deliveries", "/api/v1/live", "/api/v1/sync", "/api/v1/alerts", "/api/v1/statements?month=2026-10", "/api/v1/users", "/api/v1/tokens",
    ];
    const answered: Record<string, number> = {};
    for (const route of routes) answered[route] = await status(b.base, route, bearer(adminToken));
    expect(answered).toEqual(Object.fromEntries(routes.map((r) => [r, 200])));
    const metrics = await fetch(`${a.base}/metrics`, { headers: bearer("metrics-token-0123456789") });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/callboard_last_good_sync_age_seconds\{app="acme"\}/);
    const { existsSync } = await import("node:fs");
    expect(existsSync(serverEnv.DATABASE_PATH)).toBe(false);
  });

  it("a session signed out on A is refused by B at once; so are a token revoked and a user removed on A", async () => {
    const jar = await signIn(a.base, ADMIN.email, ADMIN.password);
    for (const s of [a, b]) expect(await status(s.base, "/api/v1/users/me", { cookie: jar.header() })).toBe(200);
    // The dashboard's pages render on B from the state A signed in against.
    const pages = ["/", "/calls", "/participants", "/recordings", "/events", "/live", "/sync", "/alerts", "/statements", "/preferences", "/settings", "/settings/apps", "/settings/users", "/settings/tokens", "/settings/audit", "/settings/prices"];
    const answered: Record<string, number> = {};
    for (const page of pages) answered[page] = await status(b.base, page, { cookie: jar.header() });
    expect(answered).toEqual(Object.fromEntries(pages.map((p) => [p, 200])));
    const session = jar.header();
    await signOut(a.base, jar);
    expect(await status(b.base, "/api/v1/users/me", { cookie: session })).toBe(401);
    expect(await status(a.base, "/api/v1/users/me", { cookie: session })).toBe(401);

    // A token revoked through A: B refuses it at its next request.
    expect(await status(b.base, "/api/v1/usage/apps", bearer(viewer.token))).toBe(200);
    const revoke = await fetch(`${a.base}/api/v1/tokens/${viewer.tokenId}`, { method: "DELETE", headers: bearer(adminToken) });
    expect(revoke.status).toBe(200);
    expect(await status(b.base, "/api/v1/usage/apps", bearer(viewer.token))).toBe(401);

    // A user removed through A: B refuses the user's other token at once.
    expect(await status(b.base, "/api/v1/usage/apps", bearer(viewer.otherToken))).toBe(200);
    const remove = await fetch(`${a.base}/api/v1/users/${viewer.id}`, { method: "DELETE", headers: bearer(adminToken) });
    expect(remove.status).toBe(200);
    expect(await status(b.base, "/api/v1/usage/apps", bearer(viewer.otherToken))).toBe(401);
  });

  it("Postgres stopped: pages, webhooks, reports and health answer 503 with Retry-After on both; back, both answer again", async () => {
    const body = JSON.stringify(messageSent({ appId: "acme" }, "while-down", Math.floor(Date.now() / 1000)));
    postgres.pause();
    try {
      for (const s of [a, b]) {
        for (const [what, res] of [
          ["page", await fetch(`${s.base}/sync`, { redirect: "manual" })],
          ["health", await fetch(`${s.base}/api/health`)],
          ["report", await fetch(`${s.base}/api/v1/usage/apps`, { headers: bearer(adminToken) })],
          ["webhook", await fetch(`${s.base}/api/webhooks/acme`, { method: "POST", headers: { authorization: HOOK, "content-type": "application/json" }, body })],
        ] as const) {
          const text = await res.text();
          expect(res.status, `${what} on ${s.base}`).toBe(503);
          expect(Number(res.headers.get("retry-after")), `${what} Retry-After`).toBeGreaterThan(0);
          // Nothing of where the database is reaches the client.
          expect(text).not.toMatch(/127\.0\.0\.1:\d+|ECONNREFUSED|scram|password/i);
        }
      }
    } finally {
      postgres.start();
    }
    for (const s of [a, b]) {
      await expect.poll(() => status(s.base, "/api/health"), { timeout: 20_000, interval: 250 }).toBe(200);
      expect(await status(s.base, "/api/v1/usage/apps", bearer(adminToken))).toBe(200);
    }
    // The delivery refused meanwhile was not stored: the platform's retry is its first copy.
    const res = await fetch(`${b.base}/api/webhooks/acme`, { method: "POST", headers: { authorization: HOOK, "content-type": "application/json" }, body });
    expect(res.status).toBe(200);
    const stored = await pgDb.$client.query("SELECT repeat_count FROM webhook_deliveries WHERE body::json->'data'->'message'->>'id' = 'while-down'");
    expect(stored.rows).toEqual([{ repeat_count: "0" }]);
  });

  it("webhooks sent to both, one SIGKILLed during the load: every delivery answered 200 is stored and in ClickHouse once", async () => {
    const acked = new Set<string>();
    let sent = 0;
    const send = async (server: TestServer, id: string) => {
      const body = JSON.stringify(messageSent({ appId: "acme" }, id, Math.floor(Date.now() / 1000)));
      try {
        const res = await fetch(`${server.base}/api/webhooks/acme`, { method: "POST", headers: { authorization: HOOK, "content-type": "application/json" }, body });
        if (res.status === 200) acked.add(id);
        else expect(res.status).toBe(503); // never a 200 that is lost, never a 500
      } catch {
        // The killed server's connection reset: not acknowledged, the platform sends it again.
      }
    };
    const victim = b;
    const load = (async () => {
      for (let round = 0; round < 60; round++) {
        await Promise.all(
          Array.from({ length: 8 }, (_, i) => {
            sent += 1;
            return send(i % 2 === 0 ? a : victim, `load-${round}-${i}`);
          }),
        );
      }
    })();
    // Mid-load: the server dies without a chance to flush or close anything.
    await expect.poll(() => acked.size, { timeout: 60_000, interval: 20 }).toBeGreaterThan(120);
    victim.child.kill("SIGKILL");
    await load;
    expect(sent).toBe(480);
    expect(acked.size).toBeGreaterThan(240); // A took its half throughout

    // Every acknowledged delivery is stored in Postgres, once.
    const stored = await pgDb.$client.query<{ id: string; n: string }>(
      "SELECT body::json->'data'->'message'->>'id' AS id, count(*) AS n FROM webhook_deliveries GROUP BY 1",
    );
    const storedIds = new Map(stored.rows.map((r) => [r.id, Number(r.n)]));
    for (const id of acked) expect(storedIds.get(id), `${id} answered 200`).toBe(1);

    // A (alone now) forwards the shared queue, the killed server's share too.
    await expect
      .poll(async () => Number((await pgDb.$client.query<{ n: string }>("SELECT count(*) AS n FROM delivery_forward_queue")).rows[0]!.n), { timeout: 60_000, interval: 250 })
      .toBe(0);
    const clickhouse = openClickHouse(ch.config(DATABASE));
    try {
      // Every stored delivery (this suite's), none missing and none extra, whichever server forwarded it.
      const keys = await clickhouse.rows<{ idem_key: string }>("SELECT DISTINCT idem_key FROM webhook_deliveries");
      const all = await pgDb.$client.query<{ idem_key: string }>("SELECT idem_key FROM webhook_deliveries");
      expect(new Set(keys.map((k) => k.idem_key))).toEqual(new Set(all.rows.map((r) => r.idem_key)));
      // Counted once each: the event counts ClickHouse holds add up to the deliveries stored.
      const [counted] = await clickhouse.rows<{ n: string }>(
        "SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM event_counts WHERE trigger = 'message_sent' GROUP BY app_pk, bucket_start, trigger)",
      );
      const total = await pgDb.$client.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE trigger = 'message_sent'");
      expect(Number(counted!.n)).toBe(Number(total.rows[0]!.n));
    } finally {
      await clickhouse.close();
    }
    // The killed server comes back (a new process on a new port) for what follows.
    b = await startOne();
    expect(await status(b.base, "/api/health")).toBe(200);
  });

  it("an alert rule that fires gives one notification, with both servers evaluating", async () => {
    const receiver: Receiver = await startReceiver();
    try {
      // Deliveries received over the last quarter hour (one a minute): whichever five minutes
      // closed last when the servers evaluate, the rule's window holds some.
      const [app] = (await pgDb.$client.query<{ pk: string }>("SELECT pk FROM apps WHERE app_id = 'acme'")).rows;
      const now = Date.now();
      for (let i = 1; i <= 15; i++) {
        const at = now - i * 60_000;
        await pgDb.$client.query(
          "INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, outcome, body, received_ms, last_received_ms) VALUES ($1, $2, 'message_sent', 'w', 'stored', '{}', $3, $3)",
          [app!.pk, `alert-seed-${i}`, at],
        );
      }
      const created = await fetch(`${a.base}/api/v1/alerts`, {
        method: "POST",
        headers: { ...bearer(adminToken), "content-type": "application/json" },
        body: JSON.stringify({
          name: "any delivery", metric: "webhookDeliveries", windowSeconds: 300, condition: { op: "above", value: 0 },
          destination: { url: receiver.url, allowPrivate: true },
        }),
      });
      expect(created.status).toBe(201);
      await expect.poll(() => receiver.received.length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
      expect(servers.filter((x) => x.child.exitCode === null && x.child.signalCode === null)).toHaveLength(2);
      // Several more rounds of both schedules: still one.
      await new Promise((r) => setTimeout(r, 4_000));
      expect(receiver.received).toHaveLength(1);
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ rule: { name: "any delivery" }, state: "firing" });
      const events = await pgDb.$client.query("SELECT to_state FROM alert_events");
      expect(events.rows).toEqual([{ to_state: "firing" }]);
      const outbox = await pgDb.$client.query("SELECT status FROM alert_outbox");
      expect(outbox.rows).toEqual([{ status: "delivered" }]);
    } finally {
      await receiver.close();
    }
  });

  it("two servers asked to sync the same app at once: one sync runs, the other says it is already running; both show it", async () => {
    const info = emu.apps.find((x) => x.appId === "gamma")!;
    await addApp(stateDbOfPostgres(pgDb), {
      appId: "gamma", name: "Gamma", region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl, webhookUsername: "hook", webhookPassword: "hook-password",
    });
    const syncNow = (s: TestServer) =>
      fetch(`${s.base}/api/v1/sync`, { method: "POST", headers: { ...bearer(adminToken), "content-type": "application/json" }, body: JSON.stringify({ app: "gamma" }) }).then(
        async (res) => ({ status: res.status, body: (await res.json()) as { data: Array<{ status: string; inserted: number; error: string | null }> } }),
      );
    const answers = await Promise.all([syncNow(a), syncNow(b)]);
    for (const r of answers) expect(r.status).toBe(200);
    const results = answers.map((r) => r.body.data[0]!);
    expect(results.map((r) => r.status).sort()).toEqual(["already_running", "succeeded"]);
    expect(results.find((r) => r.status === "already_running")!.error).toMatch(/^a sync of app gamma is already running/);
    expect(results.find((r) => r.status === "succeeded")!.inserted).toBe(400);
    // The one run, seen from both servers; every call in ClickHouse once.
    for (const s of [a, b]) {
      const runs = (await (await fetch(`${s.base}/api/v1/sync?app=gamma`, { headers: bearer(adminToken) })).json()) as { data: Array<{ status: string; inserted: number }> };
      expect(runs.data.map((r) => [r.status, r.inserted])).toEqual([["succeeded", 400]]);
    }
    const clickhouse = openClickHouse(ch.config(DATABASE));
    try {
      const [row] = await clickhouse.rows<{ calls: string; miscounted: string }>(
        `SELECT sum(sign) AS calls, (SELECT countIf(n NOT IN (0, 1)) FROM (SELECT sum(sign) AS n FROM calls_v2 GROUP BY app_pk, session_id)) AS miscounted FROM calls_v2`,
      );
      expect({ calls: Number(row!.calls), miscounted: Number(row!.miscounted) }).toEqual({ calls: 400, miscounted: 0 });
    } finally {
      await clickhouse.close();
    }
  });

  it("a recording and a participant's join sent to A: B's reports count the call as recorded and its page lists the client", async () => {
    // A gamma call the sync stored (the test above) that the platform did not flag as recorded.
    const calls = (await (await fetch(`${b.base}/api/v1/calls?app=gamma&hasRecording=false`, { headers: bearer(adminToken) })).json()) as { data: Array<{ sessionId: string; startAt: number }> };
    const call = calls.data[0]!;
    const recorded = async () => {
      const res = await fetch(`${b.base}/api/v1/calls?app=gamma&hasRecording=true`, { headers: bearer(adminToken) });
      return ((await res.json()) as { data: Array<{ sessionId: string }> }).data.map((c) => c.sessionId);
    };
    expect(await recorded()).not.toContain(call.sessionId);
    const post = (d: unknown) =>
      fetch(`${a.base}/api/webhooks/gamma`, { method: "POST", headers: { authorization: HOOK, "content-type": "application/json" }, body: JSON.stringify(d) }).then((r) => r.status);
    expect(await post(recordingGenerated({ appId: "gamma" }, call.sessionId, call.startAt + 5))).toBe(200);
    expect(await post(participantJoined({ appId: "gamma" }, call.sessionId, { name: "Joiner", joined_at: call.startAt + 2 }))).toBe(200);

    // Forwarded by either server with its link flag: B's report counts the call as recorded.
    await expect.poll(recorded, { timeout: 30_000, interval: 250 }).toContain(call.sessionId);
    const detail = (await (await fetch(`${b.base}/api/v1/calls/${encodeURIComponent(call.sessionId)}?app=gamma`, { headers: bearer(adminToken) })).json()) as {
      data: { hasRecording: boolean; clients: Array<{ occupant: string; platform: string }> };
    };
    expect(detail.data.hasRecording).toBe(true);
    expect(detail.data.clients.map((c) => c.occupant)).toEqual(["Joiner"]);
    // And the clients report, from ClickHouse, has the session.
    await expect
      .poll(async () => {
        const res = await fetch(`${b.base}/api/v1/insights/clients?app=gamma`, { headers: bearer(adminToken) });
        return ((await res.json()) as { data: Array<{ dimension: string; sessions: number }> }).data.filter((r) => r.dimension === "platform").reduce((n, r) => n + r.sessions, 0);
      }, { timeout: 30_000, interval: 250 })
      .toBe(1);
  });
});
