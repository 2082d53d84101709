import { rmSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPORT_ROUTES } from "@/lib/analytics/http";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * The lean API path (0016) against the production server: a token's report requests
 * answer exactly what Next's routes answer a signed-in browser (same bodies, JSON and
 * CSV, same security headers), gzip when asked, the token's scope and errors, a client
 * that leaves in the middle of an export.
 */
const SECRET = "api-fast-path-suite-secret-0123456789abcd";
const ADMIN = { email: "admin@callboard.test", password: "admin-password-123" };
const NOW = 1_780_000_000;
const PATHS = [
  "/api/v1/calls?perPage=50",
  "/api/v1/calls?type=video&status=ended&sort=minutes&page=2",
  "/api/v1/usage/participants?type=video&receiverType=group",
  "/api/v1/usage/apps",
  "/api/v1/usage/daily?mode=meet&tz=Europe/Berlin",
  "/api/v1/insights/heatmap?type=audio&status=ended",
  "/api/v1/insights/totals?from=1779000000&to=1780000000",
  "/api/v1/insights/engagement?type=video&status=ended",
  "/api/v1/insights/durations",
  "/api/v1/breakdowns",
  "/api/v1/recordings",
  "/api/v1/usage/daily?tz=Asia/Kathmandu&format=csv",
  "/api/v1/calls?format=csv",
];

let server: TestServer;
let file: string;
let adminToken: string;
let viewerToken: string;
let cookie: string;

async function signInCookie(base: string): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(";")[0]!;
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const header = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = await fetch(`${base}/api/auth/csrf`);
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: header() },
    body: new URLSearchParams({ csrfToken, email: ADMIN.email, password: ADMIN.password }).toString(),
  });
  keep(res);
  return header();
}

describe.skipIf(SKIP_WITHOUT_BUILD)("the lean API path (production server)", () => {
  beforeAll(async () => {
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openFixtureDb("api-fast-path");
    file = db.$client.name;
    const r = rng(15);
    writeCalls(db, Array.from({ length: 3_000 }, (_, i) => randomCall(r, i, NOW - 90 * 86_400, 90 * 86_400)));
    const admin = await createUser(db, { ...ADMIN, role: "admin" });
    const viewer = await createUser(db, { email: "viewer@callboard.test", password: "viewer-password-1", role: "viewer", apps: ["app-two"] });
    adminToken = (await createApiToken(db, { userId: admin.id, name: "script" })).token;
    viewerToken = (await createApiToken(db, { userId: viewer.id, name: "script" })).token;
    db.$client.close();
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET } });
    cookie = await signInCookie(server.base);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (file) rmSync(path.dirname(file), { recursive: true, force: true });
  });

  const byToken = (p: string, token = adminToken, headers: Record<string, string> = {}) =>
    fetch(`${server.base}${p}`, { headers: { authorization: `Bearer ${token}`, "accept-encoding": "identity", ...headers } });

  it("answers every report as Next's route answers a signed-in browser, byte for byte", async () => {
    expect(cookie).toContain("session-token");
    for (const p of PATHS) {
      const lean = await byToken(p);
      const next = await fetch(`${server.base}${p}`, { headers: { cookie, "accept-encoding": "identity" } });
      expect(lean.status, p).toBe(200);
      expect(next.status, p).toBe(200);
      // Only Next's answer renews the session cookie: that is how the two paths are told apart.
      expect(lean.headers.getSetCookie(), p).toEqual([]);
      expect(next.headers.getSetCookie().length, p).toBeGreaterThan(0);
      for (const h of ["content-type", "cache-control", "content-disposition", "content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy", "permissions-policy"]) {
        expect(lean.headers.get(h), `${p} ${h}`).toBe(next.headers.get(h));
      }
      const [a, b] = [await lean.text(), await next.text()];
      expect(a.length, p).toBeGreaterThan(20);
      // The CSV's file name carries today's date; both were asked within the same second or so.
      expect(a, p).toBe(b);
    }
  }, 60_000);

  it("gzips a body of 1 KB or more when the client accepts it, and leaves a small one alone", async () => {
    const plain = await (await byToken("/api/v1/calls?perPage=50")).text();
    const res = await fetch(`${server.base}/api/v1/calls?perPage=50`, { headers: { authorization: `Bearer ${adminToken}`, "accept-encoding": "gzip" } });
    // fetch would inflate it by itself: read the bytes as sent through a raw request instead.
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(await res.text()).toBe(plain);
    const raw = await import("node:http").then(
      (http) =>
        new Promise<{ enc?: string; body: Buffer }>((resolve, reject) => {
          http
            .get(`${server.base}/api/v1/calls?format=csv`, { headers: { authorization: `Bearer ${adminToken}`, "accept-encoding": "gzip" } }, (r) => {
              const chunks: Buffer[] = [];
              r.on("data", (c: Buffer) => chunks.push(c));
              r.on("end", () => resolve({ enc: r.headers["content-encoding"], body: Buffer.concat(chunks) }));
            })
            .on("error", reject);
        }),
    );
    expect(raw.enc).toBe("gzip");
    const csv = gunzipSync(raw.body).toString("utf8");
    expect(csv).toBe(await (await byToken("/api/v1/calls?format=csv")).text());
    expect(raw.body.length).toBeLessThan(csv.length / 2);
    const small = await fetch(`${server.base}/api/health`, { headers: { "accept-encoding": "gzip" } });
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(((await small.json()) as { status: string }).status).toBe("ok");
  });

  it("keeps the token's scope and answers bad input and bad tokens with the JSON errors", async () => {
    const all = (await (await byToken("/api/v1/usage/apps")).json()) as { data: Array<{ app: string }> };
    expect(all.data.map((a) => a.app).sort()).toEqual(["app-one", "app-three", "app-two"]);
    const mine = (await (await byToken("/api/v1/usage/apps", viewerToken)).json()) as { data: Array<{ app: string }> };
    expect(mine.data.map((a) => a.app)).toEqual(["app-two"]);
    expect((await byToken("/api/v1/calls?app=app-one", viewerToken)).status).toBe(404);

    const bad = await byToken("/api/v1/usage/apps", "cb_" + "x".repeat(43));
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const badFilter = await byToken("/api/v1/usage/daily?tz=Mars/Olympus");
    expect(badFilter.status).toBe(400);
    expect(((await badFilter.json()) as { error: { code: string } }).error.code).toBeTruthy();
    // Not the lean path's: no token, a write, an unknown path — Next answers as before.
    expect((await fetch(`${server.base}/api/v1/usage/apps`)).status).toBe(401);
    expect((await fetch(`${server.base}/api/v1/usage/apps`, { method: "POST", headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(405);
  });

  it("survives a client that leaves in the middle of an export", async () => {
    for (let i = 0; i < 3; i++) {
      const ctrl = new AbortController();
      const res = await fetch(`${server.base}/api/v1/calls?format=csv`, { headers: { authorization: `Bearer ${adminToken}` }, signal: ctrl.signal });
      await res.body!.getReader().read();
      ctrl.abort();
    }
    const after = await byToken("/api/v1/usage/apps");
    expect(after.status).toBe(200);
    expect((await fetch(`${server.base}/api/health`)).status).toBe(200);
  });

  it("covers every report route the app serves", () => {
    expect(Object.values(REPORT_ROUTES).sort()).toEqual(
      ["apps", "breakdowns", "calls", "daily", "durations", "engagement", "heatmap", "participants", "recordings", "totals"],
    );
  });
});
