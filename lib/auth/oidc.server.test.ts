import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "@playwright/test";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { freePort, SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "@/playwright.config";

/**
 * Single sign-on against a real OpenID Connect provider (the `oidc-provider` package,
 * with its development login and consent pages) on loopback, in Chromium: first-time
 * users get their role and apps from the provider's claims, LOCAL_PASSWORDS=off leaves
 * no password sign-in, sign-out ends the session, a disabled or unverified user is refused.
 */
const SECRET = "oidc-suite-secret-0123456789abcdefghijkl";
const CLIENT = { id: "callboard", secret: "callboard-client-secret-0123456789" };
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  ada: { email: "ada@idp.test", email_verified: true, callboard_role: "admin" },
  val: { email: "val@idp.test", email_verified: true, callboard_apps: ["app-one", "not-registered"] },
  eve: { email: "eve@idp.test", email_verified: true, callboard_role: "admin" },
  nov: { email: "nov@idp.test", email_verified: false, callboard_role: "admin" },
};

let dir = "";
let idp: Server;
let server: TestServer;
let browser: Browser;
let base = "";

async function ssoSignIn(login: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/`);
  await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/signin");
  await page.getByRole("button", { name: "Sign in with single sign-on" }).click();
  // The provider's own pages: any login (its accounts are the ones above), then consent.
  await page.locator('input[name="login"]').fill(login, { timeout: 20_000 });
  await page.locator('input[name="password"]').fill("any password");
  await page.locator("button[type=submit]").click();
  const callboard = new URL(base).host;
  for (let i = 0; i < 5 && new URL(page.url()).host !== callboard; i++) {
    await Promise.race([
      page.waitForURL((u) => u.host === callboard, { timeout: 5_000 }).catch(() => undefined),
      page.locator("button[type=submit]").click({ timeout: 5_000 }).catch(() => undefined),
    ]);
  }
  await page.waitForURL((u) => u.host === callboard, { timeout: 20_000 });
  await page.waitForLoadState("networkidle");
  return { context, page };
}

describe.skipIf(SKIP_WITHOUT_BUILD)("single sign-on with OpenID Connect (production server, Chromium)", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-oidc-"));
    const file = path.join(dir, "warehouse.db");
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openDatabase(file);
    for (const id of ["app-one", "app-two"]) await addApp(db, { appId: id, name: id, region: "us", apiKey: `key-${id}-0001` });
    await createUser(db, { email: "eve@idp.test", password: "eve-local-password", role: "viewer", disabled: true });
    await createUser(db, { email: "local@example.com", password: "local-password-1", role: "admin" });
    db.$client.close();

    const [idpPort, port] = [await freePort(), await freePort()];
    const issuer = `http://127.0.0.1:${idpPort}`;
    base = `http://127.0.0.1:${port}`;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT.id,
          client_secret: CLIENT.secret,
          redirect_uris: [`${base}/api/auth/callback/oidc`],
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
      ],
      async findAccount(_ctx, sub) {
        const claims = ACCOUNTS[sub];
        return claims ? { accountId: sub, claims: async () => ({ sub, ...claims }) } : undefined;
      },
      claims: { openid: ["sub"], email: ["email", "email_verified", "callboard_role", "callboard_apps"] },
      // The claims in the ID token too, as most providers send them.
      conformIdTokenClaims: false,
      cookies: { keys: ["oidc-suite-cookie-key-0123456789"] },
      features: { devInteractions: { enabled: true } },
    });
    idp = createServer(provider.callback());
    await new Promise<void>((resolve) => idp.listen(idpPort, "127.0.0.1", resolve));

    server = await startTestServer({
      port,
      env: {
        DATABASE_PATH: file, AUTH_SECRET: SECRET,
        OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT.id, OIDC_CLIENT_SECRET: CLIENT.secret,
        OIDC_ROLE_CLAIM: "callboard_role", OIDC_APPS_CLAIM: "callboard_apps",
        LOCAL_PASSWORDS: "off",
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => (idp ? idp.close(r) : r(undefined)));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("signs a first-time admin in from the role claim, and signs out for good", async () => {
    const { context, page } = await ssoSignIn("ada");
    expect(new URL(page.url()).pathname).toBe("/");
    await expect.poll(() => page.getByTestId("signed-in-email").textContent()).toBe("ada@idp.test");
    expect(await page.getByTestId("signed-in-role").textContent()).toBe("admin");
    const me = (await (await page.request.get(`${base}/api/v1/users/me`)).json()) as { data: { role: string; apps: string[] } };
    expect(me.data).toMatchObject({ role: "admin", apps: ["app-one", "app-two"] });

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/signin");
    expect((await page.request.get(`${base}/api/v1/users/me`)).status()).toBe(401);
    await context.close();
  }, 90_000);

  it("makes a first-time user without the role claim a viewer of the apps its claim names (known ones only)", async () => {
    const { context, page } = await ssoSignIn("val");
    expect(await page.getByTestId("signed-in-role").textContent()).toBe("viewer");
    const me = (await (await page.request.get(`${base}/api/v1/users/me`)).json()) as { data: { email: string; role: string; apps: string[] } };
    expect(me.data).toEqual(expect.objectContaining({ email: "val@idp.test", role: "viewer", apps: ["app-one"] }));
    await context.close();
  }, 90_000);

  it("refuses a user disabled in Callboard and one whose email the provider has not verified", async () => {
    for (const login of ["eve", "nov"]) {
      const { context, page } = await ssoSignIn(login);
      const at = new URL(page.url());
      expect(at.pathname, login).toBe("/signin");
      expect(at.searchParams.get("error"), login).toBe("AccessDenied");
      await expect.poll(() => page.getByText(/refused this account/).count(), { timeout: 10_000 }).toBe(1);
      expect((await page.request.get(`${base}/api/v1/users/me`)).status(), login).toBe(401);
      await context.close();
    }
  }, 120_000);

  it("with LOCAL_PASSWORDS=off, shows no password form and takes no password sign-in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/signin`);
    await expect(page.getByRole("button", { name: "Sign in with single sign-on" }).isVisible()).resolves.toBe(true);
    expect(await page.locator('input[type="password"]').count()).toBe(0);
    // The credentials route, as a script would post it: no session comes back.
    const csrf = (await (await page.request.get(`${base}/api/auth/csrf`)).json()) as { csrfToken: string };
    await page.request.post(`${base}/api/auth/callback/credentials`, {
      form: { csrfToken: csrf.csrfToken, email: "local@example.com", password: "local-password-1" },
      maxRedirects: 0,
    });
    expect((await context.cookies()).some((c) => c.name.endsWith("authjs.session-token"))).toBe(false);
    expect((await page.request.get(`${base}/api/v1/users/me`)).status()).toBe(401);
    await context.close();
  }, 60_000);
});
