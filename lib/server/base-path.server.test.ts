import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "@playwright/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { startReverseProxy, type ReverseProxy } from "@/lib/testing/reverse-proxy";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "@/playwright.config";
import { MUST_RUN, startTestServer, type TestServer } from "./test-server";

/**
 * BASE_PATH=/callboard behind a reverse proxy that forwards /callboard/… as it is: the
 * pages, their links and fetches, sign-in and sign-out, the session cookie's path, the
 * API routes on both paths (lean and Next's), in a real Chromium. Next.js fixes the base
 * path at build time, so this suite makes its own build beside .next (NEXT_DIST_DIR),
 * once: a few minutes the first time, reused after.
 */
const BASE = "/callboard";
const DIST = ".tmp/next-callboard";
const SECRET = "base-path-suite-secret-0123456789abcdefgh";
const ADMIN = { email: "admin@callboard.test", password: "admin-password-123" };
const NOW = 1_780_000_000;
const BUILT = existsSync(path.join(process.cwd(), DIST, "BUILD_ID"));
const SKIP = !BUILT && !MUST_RUN && process.env.BASE_PATH_BUILD !== "1";

let server: TestServer;
let proxy: ReverseProxy;
let browser: Browser;
let file: string;
let token: string;

describe.skipIf(SKIP)("BASE_PATH behind a reverse proxy (production build for /callboard)", () => {
  beforeAll(async () => {
    if (!BUILT) {
      const build = spawnSync("npx", ["next", "build"], { env: { ...process.env, BASE_PATH: BASE, NEXT_DIST_DIR: DIST, NEXT_TELEMETRY_DISABLED: "1" }, encoding: "utf8" });
      expect(build.status, build.stderr.slice(-2000)).toBe(0);
    }
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openFixtureDb("base-path");
    file = db.$client.name;
    const r = rng(4);
    writeCalls(db, Array.from({ length: 200 }, (_, i) => randomCall(r, i, NOW - 30 * 86_400, 30 * 86_400)));
    const admin = await createUser(db, { ...ADMIN, role: "admin" });
    token = (await createApiToken(db, { userId: admin.id, scope: "read" })).token;
    db.$client.close();
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET, BASE_PATH: BASE, NEXT_DIST_DIR: DIST } });
    proxy = await startReverseProxy({ upstream: server.base, localAddress: "127.0.0.2" });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await server?.stop();
    if (file) rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it("serves every route under the base path and nothing outside it", async () => {
    expect((await fetch(`${proxy.url}${BASE}/api/health`)).status).toBe(200);
    expect((await fetch(`${proxy.url}/api/health`)).status).toBe(404);
    const bearer = { authorization: `Bearer ${token}` };
    // The lean path (a token report) and a Next route (statements), both under the prefix.
    const apps = await fetch(`${proxy.url}${BASE}/api/v1/usage/apps`, { headers: bearer });
    expect(apps.status).toBe(200);
    expect(((await apps.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect((await fetch(`${proxy.url}${BASE}/api/v1/statements?month=2026-05`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${proxy.url}/api/v1/usage/apps`, { headers: bearer })).status).toBe(404);
    // A signed-out page visit goes to the sign-in page under the prefix, keeping where it was going.
    const page = await fetch(`${proxy.url}${BASE}/calls?type=video`, { redirect: "manual" });
    expect([302, 303, 307, 308]).toContain(page.status);
    const to = new URL(page.headers.get("location")!, proxy.url);
    expect(to.pathname).toBe(`${BASE}/signin`);
    expect(to.searchParams.get("callbackUrl")).toBe("/calls?type=video");
  });

  it("signs in, follows links, fetches reports and signs out, all under /callboard, in a browser", async () => {
    const context = await browser.newContext({ baseURL: proxy.url });
    const page = await context.newPage();
    const outside: string[] = [];
    page.on("request", (req) => {
      const u = new URL(req.url());
      if (u.host === new URL(proxy.url).host && !u.pathname.startsWith(`${BASE}/`) && u.pathname !== BASE) outside.push(u.pathname);
    });
    await page.goto(`${BASE}/participants`);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe(`${BASE}/signin`);
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe(`${BASE}/participants`);

    const session = (await context.cookies()).find((c) => c.name.endsWith("authjs.session-token"));
    expect(session?.path).toBe(BASE);

    // Header links (<Link>); every request the pages make stays under the prefix and finds its route.
    const missing: string[] = [];
    page.on("response", (res) => {
      if (res.status() === 404) missing.push(new URL(res.url()).pathname);
    });
    for (const [name, to] of [["Tenant apps", "/apps"], ["Alerts", "/alerts"], ["Calls", "/calls"]] as const) {
      await page.getByRole("link", { name }).first().click();
      await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe(`${BASE}${to}`);
      await page.waitForLoadState("networkidle");
    }
    expect(missing).toEqual([]);
    const csv = await page.getByTestId("csv-link").first().getAttribute("href");
    expect(csv).toMatch(new RegExp(`^${BASE}/api/v1/`));

    await page.getByRole("button", { name: /sign out/i }).click();
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe(`${BASE}/signin`);
    expect(outside).toEqual([]);
    await context.close();
  }, 120_000);

  it("refuses to start a build made for another base path, saying how to fix it", () => {
    const r = spawnSync(path.join(process.cwd(), "node_modules", ".bin", "tsx"), ["scripts/server.ts"], {
      env: { ...process.env, NODE_ENV: "production", DATABASE_PATH: file, AUTH_SECRET: SECRET, BASE_PATH: "/elsewhere", NEXT_DIST_DIR: DIST, PORT: "0", SYNC_INTERVAL_SECONDS: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/BASE_PATH is "\/elsewhere" but this build was made with BASE_PATH "\/callboard"/);
    expect(r.stderr).toMatch(/BASE_PATH=\/elsewhere npm run build/);
  });
});
