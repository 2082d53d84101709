import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * Token scopes, expiry and the per-token rate limit on the production server, over HTTP:
 * the lean API path (0016) and Next's routes answer them alike. The read token is made
 * the way an operator makes one: `npm run tokens -- create --scope read --expires 30d`.
 */
const SECRET = "token-scopes-suite-secret-0123456789abcdef";
const NOW = 1_780_000_000;
/** Above what the read token's test asks, so that only the limited token runs out. */
const RATE = 12;

let server: TestServer;
let file: string;
let readToken: string;
let expiredToken: string;
let limitedToken: string;
let otherToken: string;

function tokensCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(path.join(process.cwd(), "node_modules", ".bin", "tsx"), ["scripts/tokens.ts", ...args], {
    env: { ...process.env, DATABASE_PATH: file, AUTH_SECRET: SECRET, LOG_LEVEL: "warn" },
    encoding: "utf8",
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(SKIP_WITHOUT_BUILD)("token scopes, expiry and rate limit (production server)", () => {
  beforeAll(async () => {
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openFixtureDb("token-scopes");
    file = db.$client.name;
    const r = rng(27);
    writeCalls(db, Array.from({ length: 300 }, (_, i) => randomCall(r, i, NOW - 30 * 86_400, 30 * 86_400)));
    const admin = await createUser(db, { email: "admin@callboard.test", password: "admin-password-123", role: "admin" });
    expiredToken = (await createApiToken(db, { userId: admin.id, expiresMs: Date.now() - 1_000 })).token;
    limitedToken = (await createApiToken(db, { userId: admin.id, scope: "read" })).token;
    otherToken = (await createApiToken(db, { userId: admin.id })).token;
    db.$client.close();

    const made = tokensCli(["create", "--email", "admin@callboard.test", "--scope", "read", "--expires", "30d", "--name", "finance"]);
    expect(made.status, made.stderr).toBe(0);
    readToken = made.stdout.trim();
    expect(readToken).toMatch(/^cb_/);
    expect(made.stderr).toMatch(/read-only/);

    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET, API_TOKEN_RATE_LIMIT_PER_MINUTE: String(RATE) } });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (file) rmSync(path.dirname(file), { recursive: true, force: true });
  });

  const call = (p: string, token: string, init: RequestInit = {}) =>
    fetch(`${server.base}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(init.headers ?? {}) } });

  it("lists the CLI's token with its scope and expiry, and refuses a bad flag with a clear message", () => {
    const list = tokensCli(["list", "--json"]);
    const finance = (JSON.parse(list.stdout) as Array<{ name: string; scope: string; expiresMs: number }>).find((t) => t.name === "finance")!;
    expect(finance.scope).toBe("read");
    expect(finance.expiresMs - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(finance.expiresMs - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    const bad = tokensCli(["create", "--email", "admin@callboard.test", "--expires", "soon"]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/expires must be a duration/);
  });

  it("a read token reads reports (lean path), CSV and statements, and writes nothing", async () => {
    expect((await call("/api/v1/usage/apps", readToken)).status).toBe(200);
    const csv = await call("/api/v1/calls?format=csv", readToken);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
    await csv.text();
    expect((await call("/api/v1/statements?month=2026-05", readToken)).status).toBe(200);
    expect((await call("/api/v1/calls/no-such-session?app=app-one", readToken)).status).toBe(404);

    const write = await call("/api/v1/alerts", readToken, { method: "POST", body: JSON.stringify({ name: "x" }) });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "forbidden", message: expect.stringMatching(/read-only/) });
    const mint = await call("/api/v1/tokens", readToken, { method: "POST", body: JSON.stringify({ email: "admin@callboard.test" }) });
    expect(mint.status).toBe(403);
    // Admin-only reads too: an admin's read token is not an admin.
    expect((await call("/api/v1/users", readToken)).status).toBe(403);
    expect((await call("/api/v1/tokens", readToken)).status).toBe(403);
  });

  it("an expired token is refused on the lean path and on Next's", async () => {
    for (const p of ["/api/v1/usage/apps", "/api/v1/statements?month=2026-05"]) {
      const res = await call(p, expiredToken);
      expect(res.status, p).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/expired/);
    }
  });

  it("a token past its rate is answered 429 with Retry-After, on both paths, and others are not", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < RATE; i++) statuses.push((await call(i % 2 ? "/api/v1/usage/apps" : "/api/v1/statements?month=2026-05", limitedToken)).status);
    expect(statuses).toEqual(Array(RATE).fill(200));
    for (const p of ["/api/v1/usage/apps", "/api/v1/statements?month=2026-05"]) {
      const res = await call(p, limitedToken);
      expect(res.status, p).toBe(429);
      expect(Number(res.headers.get("retry-after")), p).toBeGreaterThanOrEqual(1);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    }
    expect((await call("/api/v1/usage/daily", otherToken)).status).toBe(200);
  });
});
