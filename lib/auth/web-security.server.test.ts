import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";

/**
 * Sign-out, writes signed in by cookie, and redirects, against the production server
 * over HTTP, served with AUTH_URL=http://127.0.0.1:PORT (issue 12, items 3, 4, 7).
 */
const ADMIN = { email: "admin@callboard.test", password: "admin-password-123" };
const SECRET = "web-security-suite-secret-0123456789abcdef";

/** A cookie jar of one client: what Set-Cookie said last, sent back on every request. */
class Client {
  cookies = new Map<string, string>();
  constructor(private readonly base: string) {}

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async fetch(pathname: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = this.header();
    const res = await fetch(`${this.base}${pathname}`, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  async csrfToken(): Promise<string> {
    return ((await (await this.fetch("/api/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
  }

  async signIn(who = ADMIN, callbackUrl?: string): Promise<Response> {
    const form = new URLSearchParams({ csrfToken: await this.csrfToken(), email: who.email, password: who.password });
    if (callbackUrl) form.set("callbackUrl", callbackUrl);
    return this.fetch("/api/auth/callback/credentials", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
  }

  copy(): Client {
    const c = new Client(this.base);
    c.cookies = new Map(this.cookies);
    return c;
  }
}

/** Every state-changing route handler of the app (read from app/, dynamic segments filled with 1). */
function writeRoutes(): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = [];
  const walk = (dir: string, segments: string[]) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name.startsWith("_")) continue;
        walk(full, name.startsWith("(") ? segments : [...segments, name.startsWith("[") ? "1" : name]);
      } else if (name === "route.ts") {
        const p = "/" + segments.join("/");
        if (p.startsWith("/api/auth") || p.startsWith("/api/webhooks")) continue;
        for (const m of readFileSync(full, "utf8").matchAll(/export\s+(?:async\s+)?(?:function|const)\s+(POST|PUT|PATCH|DELETE)\b/g)) out.push({ method: m[1], path: p });
      }
    }
  };
  walk(path.join(process.cwd(), "app"), []);
  return out;
}

describe.skipIf(SKIP_WITHOUT_BUILD)("the production server, as a browser and an attacker see it", () => {
  let dir = "";
  let file = "";
  let server: TestServer;
  let base = "";
  let admin: Client;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-web-security-"));
    file = path.join(dir, "warehouse.db");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = await startTestServer({
      port,
      env: {
        DATABASE_PATH: file, AUTH_SECRET: SECRET, AUTH_URL: base, AUTH_TRUST_HOST: "true", ANALYTICS_WORKER: "off",
        CALLBOARD_ADMIN_EMAIL: ADMIN.email, CALLBOARD_ADMIN_PASSWORD: ADMIN.password,
      },
    });
    admin = new Client(base);
    const signedIn = await admin.signIn();
    expect(signedIn.status).toBe(302);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const userCount = (email: string) => {
    const sqlite = new Database(file, { readonly: true });
    try {
      return (sqlite.prepare("SELECT count(*) n FROM users WHERE email = ?").get(email) as { n: number }).n;
    } finally {
      sqlite.close();
    }
  };

  describe("redirects (item 7)", () => {
    it("sends sign-in and its callbackUrl to AUTH_URL's host, where the cookie is sent", async () => {
      const c = new Client(base);
      const res = await c.signIn(ADMIN, "/calls?type=video");
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`${base}/calls?type=video`);
      const plain = await new Client(base).signIn(ADMIN);
      expect(plain.headers.get("location")).toMatch(new RegExp(`^${base}/?$`));
      const providers = (await (await c.fetch("/api/auth/providers")).json()) as { credentials: { signinUrl: string; callbackUrl: string } };
      expect(providers.credentials.callbackUrl).toBe(`${base}/api/auth/callback/credentials`);
      // And the sign-in page a wrong password comes back to.
      const wrong = await new Client(base).signIn({ email: ADMIN.email, password: "wrong-password" });
      expect(wrong.headers.get("location")).toMatch(new RegExp(`^${base}/signin\\?`));
    });

    it("sends an unsigned page request to sign-in on the configured host, whatever Host or X-Forwarded-Host say", async () => {
      const variants: Array<Record<string, string>> = [{}, { "x-forwarded-host": "elsewhere.example" }, { "x-forwarded-host": "localhost" }];
      for (const headers of variants) {
        const res = await fetch(`${base}/participants?app=a`, { headers, redirect: "manual" });
        expect(res.status).toBe(307);
        const location = new URL(res.headers.get("location")!, base);
        expect(location.origin, JSON.stringify(headers)).toBe(base);
        expect(location.pathname).toBe("/signin");
        expect(location.searchParams.get("callbackUrl")).toBe("/participants?app=a");
      }
    });
  });

  describe("sign-out (item 3)", () => {
    it("POST /api/auth/signout ends the session for good: the old cookie opens nothing afterwards", async () => {
      const session = new Client(base);
      expect((await session.signIn()).status).toBe(302);
      const stolen = session.copy();
      expect((await stolen.fetch("/api/v1/users/me")).status).toBe(200);
      const out = await session.fetch("/api/auth/signout", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrfToken: await session.csrfToken() }).toString(),
      });
      expect(out.status).toBe(302);
      expect(out.headers.get("location")).toMatch(new RegExp(`^${base}`));
      expect([...session.cookies.keys()].some((k) => k.endsWith("authjs.session-token"))).toBe(false);
      const after = await stolen.fetch("/api/v1/users/me");
      expect(after.status).toBe(401);
      expect(((await after.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      // Pages too: they show nothing of the signed-out user.
      const page = await stolen.fetch("/settings/users");
      expect(await page.text()).not.toContain(ADMIN.email);
    });

    it("a sign-out without next-auth's CSRF token ends nothing", async () => {
      const session = new Client(base);
      expect((await session.signIn()).status).toBe(302);
      const kept = session.copy();
      await session.fetch("/api/auth/signout", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "csrfToken=forged" });
      expect((await kept.fetch("/api/v1/users/me")).status).toBe(200);
    });
  });

  describe("writes signed in by cookie (item 4)", () => {
    const newAdmin = (tag: string) => ({ email: `made-${tag}@evil.example`, password: "evil-password-123", role: "admin" });

    it("refuses another site's Origin, even with application/json, and creates nothing", async () => {
      for (const [tag, headers] of [
        ["evil-plain", { origin: "http://evil.example", "content-type": "text/plain" }],
        ["evil-json", { origin: "http://evil.example", "content-type": "application/json" }],
        ["sibling", { origin: "http://admin.127.0.0.1.nip.example", "content-type": "application/json" }],
        ["null-origin", { origin: "null", "content-type": "application/json" }],
        ["evil-referer", { referer: "http://evil.example/page", "content-type": "application/json" }],
        ["no-origin", { "content-type": "application/json" }],
      ] as const) {
        const body = newAdmin(tag);
        const res = await admin.fetch("/api/v1/users", { method: "POST", headers: { ...headers }, body: JSON.stringify(body) });
        expect(res.status, tag).toBe(403);
        expect(res.headers.get("content-type")).toMatch(/application\/json/);
        expect(((await res.json()) as { error: { code: string } }).error.code, tag).toBe("cross_site_request");
        expect(userCount(body.email), tag).toBe(0);
      }
      const tokens = await admin.fetch("/api/v1/tokens", { method: "POST", headers: { origin: "http://evil.example", "content-type": "text/plain" }, body: JSON.stringify({ email: ADMIN.email }) });
      expect(tokens.status).toBe(403);
    });

    it("refuses a JSON body that is not application/json from our own pages (415), and takes it as JSON", async () => {
      const plain = newAdmin("own-plain");
      const res = await admin.fetch("/api/v1/users", { method: "POST", headers: { origin: base, "content-type": "text/plain" }, body: JSON.stringify(plain) });
      expect(res.status).toBe(415);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
      expect(userCount(plain.email)).toBe(0);
      const form = await admin.fetch("/api/v1/tokens", { method: "POST", headers: { referer: `${base}/settings`, "content-type": "application/x-www-form-urlencoded" }, body: "email=x" });
      expect(form.status).toBe(415);

      const ok = newAdmin("own-json");
      const created = await admin.fetch("/api/v1/users", { method: "POST", headers: { origin: base, "content-type": "application/json" }, body: JSON.stringify(ok) });
      expect(created.status).toBe(201);
      expect(userCount(ok.email)).toBe(1);
      const byReferer = await admin.fetch("/api/v1/tokens", { method: "POST", headers: { referer: `${base}/settings/tokens`, "content-type": "application/json; charset=utf-8" }, body: JSON.stringify({ email: ok.email }) });
      expect(byReferer.status).toBe(201);
    });

    it("guards every state-changing route the same way", async () => {
      const routes = writeRoutes();
      expect(routes.length).toBeGreaterThanOrEqual(5);
      for (const r of routes) {
        const res = await admin.fetch(r.path, { method: r.method, headers: { origin: "http://evil.example", "content-type": "text/plain" }, body: "{}" });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
      }
    });

    it("leaves requests with a bearer token alone, whatever their Origin", async () => {
      const created = await admin.fetch("/api/v1/tokens", { method: "POST", headers: { origin: base, "content-type": "application/json" }, body: JSON.stringify({ email: ADMIN.email, name: "script" }) });
      const { token } = ((await created.json()) as { data: { token: string } }).data;
      const body = newAdmin("by-token");
      const res = await fetch(`${base}/api/v1/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, origin: "http://evil.example", "content-type": "text/plain" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(201);
      expect(userCount(body.email)).toBe(1);
    });

    it("refuses a server action posted from another site", async () => {
      const page = await admin.fetch("/settings/tokens");
      expect(page.status).toBe(200);
      const html = await page.text();
      // The create-token form as React renders it for a browser without JavaScript.
      const form = /<form[^>]*aria-label="Create an API token"[^>]*>([\s\S]*?)<\/form>/.exec(html)?.[1];
      expect(form).toBeTruthy();
      const fields = new FormData();
      for (const m of form!.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
        const name = /name="([^"]*)"/.exec(m[0])?.[1];
        const value = /value="([^"]*)"/.exec(m[0])?.[1] ?? "";
        if (name) fields.set(name.replace(/&quot;/g, '"'), value.replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
      }
      expect([...fields.keys()].some((k) => k.startsWith("$ACTION"))).toBe(true);
      fields.set("email", ADMIN.email);
      fields.set("name", "made-cross-site");
      const tokensNamed = (name: string) => {
        const sqlite = new Database(file, { readonly: true });
        try {
          return (sqlite.prepare("SELECT count(*) n FROM api_tokens WHERE name = ?").get(name) as { n: number }).n;
        } finally {
          sqlite.close();
        }
      };
      const refused = await admin.fetch("/settings/tokens", { method: "POST", headers: { origin: "http://evil.example" }, body: fields });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("cross_site_request");
      expect(tokensNamed("made-cross-site")).toBe(0);

      fields.set("name", "made-same-site");
      const accepted = await admin.fetch("/settings/tokens", { method: "POST", headers: { origin: base }, body: fields });
      expect(accepted.status).toBeLessThan(400);
      expect(tokensNamed("made-same-site")).toBe(1);
    });
  });
});
