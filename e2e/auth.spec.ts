/**
 * Sign-in, sessions, tokens, throttling, tenant isolation and "nothing leaks", against
 * the production build. The admin comes from CALLBOARD_ADMIN_EMAIL/PASSWORD of the
 * fixture; every other user is created here. Failed sign-ins are sent with their own
 * X-Forwarded-For (trusted from a loopback peer, see lib/auth/client-address.ts) so
 * they never throttle the address other specs sign in from.
 *
 * E2E_KNOWN_SECRETS (comma-separated): API keys / webhook passwords / management
 * secrets the fixture configured; no response may contain any of them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { demoState } from "./fixture";
import { expect, test, type APIRequestContext, type APIResponse, type PlaywrightWorkerArgs } from "@playwright/test";

const ADMIN = {
  email: process.env.E2E_ADMIN_EMAIL ?? "admin@callboard.demo",
  password: process.env.E2E_ADMIN_PASSWORD ?? "callboard-demo",
};
/** The fixture's API keys, webhook password and management secrets (demo-state.json), plus any given. */
function knownSecrets(): string[] {
  let fromFixture: string[] = [];
  try {
    fromFixture = demoState().knownSecrets;
  } catch {
    // Another fixture: only E2E_KNOWN_SECRETS.
  }
  return [...fromFixture, ...(process.env.E2E_KNOWN_SECRETS ?? "").split(",")].map((s) => s.trim()).filter((s) => s.length >= 6);
}
const RUN = Date.now().toString(36);
let xffCounter = 0;
/** A fresh documentation-range address per use: failures never pile up on one key by accident. */
const freshAddress = () => `198.18.${(Date.now() >> 8) % 250}.${(xffCounter++ % 250) + 1}`;

// ---------------------------------------------------------------- discovery

interface RouteFile {
  path: string;
  kind: "page" | "route";
  methods: string[];
}

/** Every page and route handler of the app, read from app/ (dynamic segments filled). */
function discoverRoutes(): RouteFile[] {
  const root = path.join(process.cwd(), "app");
  const out: RouteFile[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name.startsWith("_") || name.startsWith("@")) continue;
        const seg = name.startsWith("(") ? null : name.startsWith("[...") || name.startsWith("[[...") ? "x" : name.startsWith("[") ? "1" : name;
        walk(full, seg === null ? segments : [...segments, seg]);
      } else if (/^page\.(tsx|ts|jsx|js)$/.test(name)) {
        out.push({ path: "/" + segments.join("/"), kind: "page", methods: ["GET"] });
      } else if (/^route\.(ts|js)$/.test(name)) {
        const text = readFileSync(full, "utf8");
        const methods = [...text.matchAll(/export\s+(?:async\s+)?(?:function|const)\s+(GET|POST|PUT|PATCH|DELETE)\b/g)].map((m) => m[1]);
        out.push({ path: "/" + segments.join("/"), kind: "route", methods: [...new Set(methods)] });
      }
    }
  };
  walk(root, []);
  return out;
}

const OPEN = [/^\/signin$/, /^\/api\/auth\//, /^\/api\/health$/, /^\/api\/webhooks\//];
const ROUTES = discoverRoutes();
const GUARDED = ROUTES.filter((r) => !OPEN.some((re) => re.test(r.path)));
const PAGES = GUARDED.filter((r) => r.kind === "page");
const APIS = GUARDED.filter((r) => r.kind === "route");

// ---------------------------------------------------------------- helpers

async function signInOverHttp(ctx: APIRequestContext, email: string, password: string, address = freshAddress()): Promise<APIResponse> {
  const csrf = await ctx.get("/api/auth/csrf");
  expect(csrf.ok()).toBe(true);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  return ctx.post("/api/auth/callback/credentials", {
    form: { csrfToken, email, password, callbackUrl: "/" },
    headers: { "x-forwarded-for": address },
    maxRedirects: 0,
  });
}

function signedIn(res: APIResponse): boolean {
  const location = res.headers()["location"] ?? "";
  return res.status() === 302 && !location.includes("error=");
}

async function newContext(playwright: PlaywrightWorkerArgs["playwright"], baseURL: string, token?: string): Promise<APIRequestContext> {
  return playwright.request.newContext({ baseURL, extraHTTPHeaders: token ? { authorization: `Bearer ${token}` } : {} });
}

async function json<T>(res: APIResponse): Promise<T> {
  return (await res.json()) as T;
}

/** Markers that must never reach a client, whatever the response. */
function assertNoSecrets(body: string, where: string, extra: string[] = []): void {
  for (const s of [...knownSecrets(), ...extra]) expect(body.includes(s), `${where} leaks a secret`).toBe(false);
  expect(body, `${where} leaks a password hash`).not.toMatch(/\$argon2id?\$/);
  expect(body, `${where} leaks an encrypted secret`).not.toMatch(/\bv1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\./);
  expect(body, `${where} leaks a column of secrets`).not.toMatch(/api_key_enc|apiKeyEnc|webhook_password_enc|webhookPasswordEnc|password_hash|passwordHash|token_hash|tokenHash/);
}

/**
 * One request as a script would send it: with `?app=` (detail routes require it and may
 * check it before the caller; a missing parameter is not what these tests are about).
 */
function sameRequest(ctx: APIRequestContext, method: string, path: string, headers: Record<string, string> = {}): Promise<APIResponse> {
  const url = `${path}?app=${encodeURIComponent(appIds[0] ?? "x")}`;
  // Writes carry the Origin a browser sends (a cookie write without it is refused as cross-site).
  const writeHeaders = method === "GET" ? headers : { origin: ownOrigin, ...headers };
  const options = { headers: writeHeaders, maxRedirects: 0, failOnStatusCode: false, ...(method === "GET" ? {} : { data: {} }) };
  return ctx.fetch(url, { ...options, method });
}

// ---------------------------------------------------------------- shared state

let admin: APIRequestContext;
let adminToken: string;
let appIds: string[] = [];
/** This server's origin, as a browser names it in the Origin header of its writes. */
let ownOrigin = "";

test.beforeAll(async ({ playwright, baseURL }) => {
  ownOrigin = new URL(baseURL!).origin;
  const ctx = await playwright.request.newContext({ baseURL });
  const res = await signInOverHttp(ctx, ADMIN.email, ADMIN.password);
  expect(signedIn(res), `admin sign-in (${ADMIN.email}) answered ${res.status()} ${res.headers()["location"]}`).toBe(true);
  const created = await ctx.post("/api/v1/tokens", { headers: { origin: ownOrigin }, data: { email: ADMIN.email, name: `e2e admin ${RUN}` } });
  expect(created.status()).toBe(201);
  adminToken = (await json<{ data: { token: string } }>(created)).data.token;
  await ctx.dispose();
  admin = await newContext(playwright, baseURL!, adminToken);
  appIds = (await json<{ data: { apps: string[] } }>(await admin.get("/api/v1/users/me"))).data.apps;
});

test.afterAll(async () => {
  await admin?.dispose();
});

async function createUser(role: "admin" | "viewer", apps: string[] = []): Promise<{ id: number; email: string; password: string }> {
  const email = `e2e-${role}-${RUN}-${xffCounter++}@example.com`;
  const password = `pw-${RUN}-${Math.random().toString(36).slice(2)}`;
  const res = await admin.post("/api/v1/users", { data: { email, password, role, apps } });
  expect(res.status(), await res.text()).toBe(201);
  return { id: (await json<{ data: { id: number } }>(res)).data.id, email, password };
}

async function tokenFor(email: string): Promise<{ id: number; token: string }> {
  const res = await admin.post("/api/v1/tokens", { data: { email, name: "e2e" } });
  expect(res.status()).toBe(201);
  return (await json<{ data: { id: number; token: string } }>(res)).data;
}

// ---------------------------------------------------------------- tests

test("sign-in and sign-out in the browser", async ({ page }) => {
  await page.goto("/settings/users");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Fsettings%2Fusers/);
  await expect(page.getByRole("heading", { name: "Callboard" })).toBeVisible();

  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/settings\/users$/);
  await expect(page.getByTestId("signed-in-email")).toHaveText(ADMIN.email);
  await expect(page.getByTestId("signed-in-role")).toHaveText("admin");

  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name.endsWith("authjs.session-token"));
  expect(session).toBeDefined();
  expect(session!.httpOnly).toBe(true);
  expect(session!.sameSite).toBe("Lax");
  expect(session!.expires).toBeGreaterThan(Date.now() / 1000);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  // Whatever cookie the browser still holds (a prefetch in flight during sign-out can
  // bring back a renewed one), the signed-out session opens nothing.
  const me = await page.request.get("/api/v1/users/me");
  expect(me.status()).toBe(401);
});

test("a wrong password shows a clear message on the sign-in page", async ({ page }) => {
  await page.setExtraHTTPHeaders({ "x-forwarded-for": freshAddress() });
  await page.goto("/signin");
  await page.getByLabel("Email").fill(ADMIN.email.replace("@", "+nobody@"));
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("#signin-error")).toHaveText("Email or password is incorrect.");
  await expect(page).toHaveURL(/\/signin/);
});

test("security headers on pages and API answers", async ({ request }) => {
  for (const url of ["/signin", "/api/health"]) {
    const h = (await request.get(url)).headers();
    expect(h["content-security-policy"], url).toContain("frame-ancestors 'none'");
    expect(h["content-security-policy"], url).not.toContain("unsafe-eval");
    expect(h["x-content-type-options"], url).toBe("nosniff");
    expect(h["referrer-policy"], url).toBeTruthy();
  }
});

test("without credentials every page redirects to sign-in and every API route answers 401, with no data", async ({ request }) => {
  expect(PAGES.map((p) => p.path)).toContain("/");
  expect(APIS.length).toBeGreaterThan(0);
  for (const p of PAGES) {
    const res = await request.get(p.path, { maxRedirects: 0 });
    expect([302, 303, 307, 308], `${p.path} answered ${res.status()}`).toContain(res.status());
    expect(res.headers()["location"], p.path).toMatch(/\/signin(\?|$)/);
    const body = await res.text();
    for (const id of appIds) expect(body.includes(id), `${p.path} body names app ${id}`).toBe(false);
    expect(body).not.toContain(ADMIN.email);
  }
  for (const r of APIS) {
    for (const method of r.methods) {
      // Without anything (the proxy answers) and with a forged token (the handler itself must refuse).
      const attempts: Array<Record<string, string>> = [{}, { authorization: `Bearer cb_${"A".repeat(43)}` }, { cookie: "authjs.session-token=forged" }];
      for (const headers of attempts) {
        const res = await sameRequest(request, method, r.path, headers);
        expect(res.status(), `${method} ${r.path} ${JSON.stringify(headers)}`).toBe(401);
        const body = await res.text();
        expect(JSON.parse(body)).toMatchObject({ error: { code: "unauthorized" } });
        for (const id of appIds) expect(body.includes(id)).toBe(false);
      }
    }
  }
});

test("a revoked token and a disabled user get nothing", async ({ playwright, baseURL, browser }) => {
  const viewer = await createUser("viewer", appIds.slice(0, 1));
  const { id: tokenId, token } = await tokenFor(viewer.email);
  const byToken = await newContext(playwright, baseURL!, token);
  const bySession = await playwright.request.newContext({ baseURL });
  expect(signedIn(await signInOverHttp(bySession, viewer.email, viewer.password))).toBe(true);
  expect((await byToken.get("/api/v1/users/me")).status()).toBe(200);
  expect((await bySession.get("/api/v1/users/me")).status()).toBe(200);

  // Revoked token: 401 everywhere.
  expect((await admin.delete(`/api/v1/tokens/${tokenId}`)).status()).toBe(200);
  for (const r of APIS) {
    for (const method of r.methods) {
      const res = await sameRequest(byToken, method, r.path);
      expect(res.status(), `${method} ${r.path} with a revoked token`).toBe(401);
    }
  }

  // Disabled user: the session (still a valid JWT) and a fresh token stop at once.
  const second = await tokenFor(viewer.email);
  const byToken2 = await newContext(playwright, baseURL!, second.token);
  expect((await admin.patch(`/api/v1/users/${viewer.id}`, { data: { disabled: true } })).status()).toBe(200);
  for (const r of APIS) {
    for (const method of r.methods) {
      expect((await sameRequest(bySession, method, r.path)).status(), `${method} ${r.path} disabled session`).toBe(401);
      expect((await sameRequest(byToken2, method, r.path)).status(), `${method} ${r.path} disabled token`).toBe(401);
    }
  }
  const state = await bySession.storageState();
  const context = await browser.newContext({ storageState: state });
  const page = await context.newPage();
  for (const p of PAGES) {
    await page.goto(p.path);
    await expect(page, `${p.path} for a disabled user`).toHaveURL(/\/signin/);
  }
  await context.close();
  expect(signedIn(await signInOverHttp(bySession, viewer.email, viewer.password))).toBe(false);

  // Enabled again: the old session stays dead (sessions end on disable), a new sign-in works.
  expect((await admin.patch(`/api/v1/users/${viewer.id}`, { data: { disabled: false } })).status()).toBe(200);
  expect((await bySession.get("/api/v1/users/me")).status()).toBe(401);
  expect((await byToken2.get("/api/v1/users/me")).status()).toBe(200);
  await Promise.all([byToken.dispose(), byToken2.dispose(), bySession.dispose()]);
});

test("viewers get 404/403 on admin pages and routes", async ({ playwright, baseURL }) => {
  const viewer = await createUser("viewer");
  const ctx = await newContext(playwright, baseURL!, (await tokenFor(viewer.email)).token);
  for (const url of ["/api/v1/users", "/api/v1/tokens"]) {
    expect((await ctx.get(url)).status(), url).toBe(403);
    expect((await ctx.post(url, { data: { email: viewer.email, password: "whatever-123", role: "admin" } })).status(), url).toBe(403);
  }
  expect((await ctx.patch(`/api/v1/users/${viewer.id}`, { data: { role: "admin" } })).status()).toBe(403);
  const session = await playwright.request.newContext({ baseURL });
  expect(signedIn(await signInOverHttp(session, viewer.email, viewer.password))).toBe(true);
  for (const url of ["/settings/users", "/settings/tokens", "/settings/audit"]) {
    const res = await session.get(url, { maxRedirects: 0 });
    expect(res.status(), url).toBe(404);
    expect(await res.text()).not.toContain(ADMIN.email);
  }
  await Promise.all([ctx.dispose(), session.dispose()]);
});

test("a viewer of one app sees nothing of another", async ({ playwright, baseURL }) => {
  test.skip(appIds.length < 2, "the fixture needs two tenant apps");
  const [appA, appB] = appIds;
  // What A has: its session ids, when the calls route exists.
  const secretsOfA = new Set<string>([appA]);
  const calls = await admin.get(`/api/v1/calls?app=${encodeURIComponent(appA)}&perPage=100`);
  if (calls.status() === 200) {
    const body = await json<{ data: Array<{ sessionId?: string }> }>(calls);
    for (const c of body.data) if (c.sessionId && c.sessionId.length >= 6) secretsOfA.add(c.sessionId);
  }
  const viewer = await createUser("viewer", [appB]);
  const ctx = await newContext(playwright, baseURL!, (await tokenFor(viewer.email)).token);
  const me = await json<{ data: { apps: string[] } }>(await ctx.get("/api/v1/users/me"));
  expect(me.data.apps).toEqual([appB]);

  // Not analytics: the caller's own account, tokens and saved views (a view holds a filter, no facts).
  const analytics = APIS.filter((r) => r.methods.includes("GET") && !/^\/api\/v1\/(users|tokens|views)/.test(r.path));
  for (const r of analytics) {
    const isDetail = r.path.includes("/1") || r.path.endsWith("/x");
    const urls = isDetail
      ? [...secretsOfA].filter((s) => s !== appA).slice(0, 3).map((s) => `${r.path.replace(/\/(1|x)$/, `/${encodeURIComponent(s)}`)}?app=${encodeURIComponent(appA)}`)
      : [`${r.path}?app=${encodeURIComponent(appA)}`, `${r.path}?app=${encodeURIComponent(appA)}&format=csv`];
    for (const url of urls) {
      const res = await ctx.get(url);
      expect(res.status(), `${url} for a viewer of ${appB}`).toBe(404);
      const body = await res.text();
      // The 404 may name the app id that was asked for (the caller's own input), nothing else of A.
      for (const s of secretsOfA) if (s !== appA) expect(body.includes(s), `${url} shows ${s}`).toBe(false);
    }
    if (!isDetail) {
      for (const url of [r.path, `${r.path}?format=csv`, `${r.path}?app=${encodeURIComponent(appB)}`]) {
        const res = await ctx.get(url);
        const body = await res.text();
        for (const s of secretsOfA) expect(body.includes(s), `${url} shows ${s} to a viewer of ${appB}`).toBe(false);
      }
    }
  }
  const session = await playwright.request.newContext({ baseURL });
  expect(signedIn(await signInOverHttp(session, viewer.email, viewer.password))).toBe(true);
  // A page may echo its own URL (?app=…) in its payload: that is the viewer's input,
  // not A's data. So A's id may appear exactly as often as a made-up id in its place.
  const decoy = `nx${RUN}`.slice(0, Math.max(3, appA.length)).padEnd(appA.length, "q");
  const count = (body: string, s: string) => body.split(s).length - 1;
  for (const p of PAGES.filter((p) => !p.path.startsWith("/settings"))) {
    const plain = await (await session.get(p.path)).text();
    for (const s of secretsOfA) expect(plain.includes(s), `page ${p.path} shows ${s} to a viewer of ${appB}`).toBe(false);
    const asked = await (await session.get(`${p.path}?app=${encodeURIComponent(appA)}`)).text();
    const control = await (await session.get(`${p.path}?app=${encodeURIComponent(decoy)}`)).text();
    expect(count(asked, appA), `page ${p.path}?app=${appA} shows ${appA}`).toBe(count(control, decoy));
    for (const s of secretsOfA) if (s !== appA) expect(asked.includes(s), `page ${p.path}?app=${appA} shows ${s}`).toBe(false);
  }
  await Promise.all([ctx.dispose(), session.dispose()]);
});

test("sign-in is throttled per account and address together, and per address; the account itself is never locked", async ({ playwright, baseURL, page }) => {
  const user = await createUser("viewer");
  const ctx = await playwright.request.newContext({ baseURL });
  const usual = freshAddress();
  const stranger = freshAddress();
  // A stranger fails 5 times on the account, then even the right password from their address gets 429.
  for (let i = 0; i < 5; i++) {
    const res = await signInOverHttp(ctx, user.email, "wrong-password", stranger);
    expect(res.status()).toBe(302);
    expect(res.headers()["location"]).toContain("error=CredentialsSignin");
  }
  const refused = await signInOverHttp(ctx, user.email, user.password, stranger);
  expect(refused.status()).toBe(429);
  expect(Number(refused.headers()["retry-after"])).toBeGreaterThan(0);
  expect(await refused.json()).toMatchObject({ error: { code: "too_many_attempts", message: expect.stringMatching(/Too many failed sign-ins for this account from your network address/) } });
  // The user, from their own address, still signs in (slowed down, not locked out).
  const own = await playwright.request.newContext({ baseURL });
  expect(signedIn(await signInOverHttp(own, user.email, user.password, usual))).toBe(true);
  await own.dispose();

  // The sign-in page says so too, to the stranger.
  await page.setExtraHTTPHeaders({ "x-forwarded-for": stranger });
  await page.goto("/signin");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("#signin-error")).toContainText("Too many failed sign-ins");

  // Per address: 20 failures on 20 accounts from one address, then a 21st account is refused.
  const address = freshAddress();
  for (let i = 0; i < 20; i++) await signInOverHttp(ctx, `nobody-${RUN}-${i}@example.com`, "wrong-password", address);
  const fromAddress = await signInOverHttp(ctx, `someone-${RUN}@example.com`, "whatever", address);
  expect(fromAddress.status()).toBe(429);
  expect(await fromAddress.json()).toMatchObject({ error: { code: "too_many_attempts", message: expect.stringMatching(/network address/) } });
  // Another address is not affected.
  const other = await playwright.request.newContext({ baseURL });
  const second = await createUser("viewer");
  expect(signedIn(await signInOverHttp(other, second.email, second.password, freshAddress()))).toBe(true);
  await Promise.all([ctx.dispose(), other.dispose()]);
});

test("no response, page or CSV carries a secret, a hash or a token", async ({ playwright, baseURL }) => {
  test.info().annotations.push({ type: "known secrets", description: String(knownSecrets().length) });
  const { token: viewerToken } = await tokenFor((await createUser("viewer", appIds.slice(0, 1))).email);
  const session = await playwright.request.newContext({ baseURL });
  expect(signedIn(await signInOverHttp(session, ADMIN.email, ADMIN.password))).toBe(true);
  const tokens = [adminToken, viewerToken];
  let checked = 0;
  for (const p of PAGES) {
    for (const url of [p.path, ...appIds.map((a) => `${p.path}?app=${encodeURIComponent(a)}`)]) {
      const res = await session.get(url);
      assertNoSecrets(await res.text(), `page ${url}`, tokens);
      checked++;
    }
  }
  for (const r of APIS.filter((r) => r.methods.includes("GET"))) {
    for (const url of [r.path, `${r.path}?format=csv`, ...appIds.map((a) => `${r.path}?app=${encodeURIComponent(a)}`)]) {
      for (const ctx of [admin, session]) {
        const res = await ctx.get(url);
        assertNoSecrets(await res.text(), `GET ${url}`, tokens);
        checked++;
      }
    }
  }
  for (const url of ["/signin", "/api/health", "/api/auth/session", "/api/auth/providers", "/api/auth/csrf"]) {
    assertNoSecrets(await (await session.get(url)).text(), url, tokens);
    checked++;
  }
  expect(checked).toBeGreaterThan(10);
  await session.dispose();
});
