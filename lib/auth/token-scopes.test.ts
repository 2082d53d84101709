import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { authorizeRequest, requireAdmin } from "./authorize";
import { freshDb, useTestEnv } from "./test-support";
import { resetTokenRateLimitsForTests, takeTokenRequest } from "./token-rate-limit";
import { createApiToken, hashToken, listApiTokens, parseTokenExpiry, parseTokenScope, resolveApiToken, tokenStatus } from "./tokens";
import { createUser } from "./users";

/** Token scopes, expiry and the per-token rate limit (issue 27, item 6). */
let ctx: ReturnType<typeof freshDb>;
let db: Db;
let adminId: number;

beforeAll(async () => {
  useTestEnv({ API_TOKEN_RATE_LIMIT_PER_MINUTE: "0" });
  ctx = freshDb();
  db = ctx.db;
  adminId = (await createUser(db, { email: "boss@example.com", password: "boss-password", role: "admin" })).id;
});
afterAll(() => ctx.dispose());
afterEach(() => resetTokenRateLimitsForTests());

const request = (token: string, method = "GET", url = "http://localhost/api/v1/calls") =>
  new Request(url, { method, headers: { authorization: `Bearer ${token}` } });

describe("read-scoped tokens", () => {
  it("read what their user may read, and are refused every write and admin operation", async () => {
    const { token, view } = await createApiToken(db, { userId: adminId, scope: "read" });
    expect(view.scope).toBe("read");
    const caller = await authorizeRequest(db, request(token));
    expect(caller).toMatchObject({ role: "admin", appPks: "all", readOnly: true });
    expect((await authorizeRequest(db, request(token, "HEAD"))).readOnly).toBe(true);
    for (const method of ["POST", "PATCH", "PUT", "DELETE"]) {
      await expect(authorizeRequest(db, request(token, method, "http://localhost/api/v1/alerts"))).rejects.toMatchObject({
        status: 403,
        code: "forbidden",
        message: expect.stringMatching(/read-only/),
      });
    }
    // An admin's read token still cannot list users or tokens (GET, but admin-only).
    expect(() => requireAdmin(caller)).toThrow(/read-only/);
  });

  it("full tokens keep their user's rights, as before scopes", async () => {
    const { token, view } = await createApiToken(db, { userId: adminId });
    expect(view).toMatchObject({ scope: "full", expiresMs: null });
    const caller = await authorizeRequest(db, request(token, "POST", "http://localhost/api/v1/alerts"));
    expect(caller.readOnly).toBeUndefined();
    expect(() => requireAdmin(caller)).not.toThrow();
  });

  it("refuses a scope that is not read or full", () => {
    expect(parseTokenScope(undefined)).toBe("full");
    expect(parseTokenScope("read")).toBe("read");
    expect(() => parseTokenScope("write")).toThrow(/scope must be/);
  });
});

describe("token expiry", () => {
  it("parses 12h, 30d, 8w from now; empty is never; nonsense is a 400", () => {
    const now = 1_700_000_000_000;
    expect(parseTokenExpiry("30d", now)).toBe(now + 30 * 86_400_000);
    expect(parseTokenExpiry("12h", now)).toBe(now + 12 * 3_600_000);
    expect(parseTokenExpiry("8W", now)).toBe(now + 8 * 7 * 86_400_000);
    expect(parseTokenExpiry("", now)).toBeNull();
    expect(parseTokenExpiry(undefined, now)).toBeNull();
    for (const bad of ["0d", "30", "-1d", "30 days", "4000w", "1y"]) {
      expect(() => parseTokenExpiry(bad, now)).toThrow(expect.objectContaining({ status: 400, details: { parameter: "expires" } }));
    }
  });

  it("a token works until its expiry, and is refused (401) from that instant on", async () => {
    const expiresMs = Date.now() + 60_000;
    const { token, view } = await createApiToken(db, { userId: adminId, scope: "read", expiresMs });
    expect(await resolveApiToken(db, token, expiresMs - 1)).toMatchObject({ tokenId: view.id, scope: "read" });
    expect(await resolveApiToken(db, token, expiresMs)).toBeNull();
    expect(tokenStatus(view, expiresMs - 1)).toBe("active");
    expect(tokenStatus(view, expiresMs)).toBe("expired");

    const past = await createApiToken(db, { userId: adminId, expiresMs: Date.now() - 1 });
    await expect(authorizeRequest(db, request(past.token))).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/expired/) });
    expect((await listApiTokens(db)).find((t) => t.id === past.view.id)!.lastUsedMs).toBeNull();
  });
});

describe("per-token rate limit", () => {
  it("answers 429 with Retry-After once a token's bucket is empty, and refills with time", () => {
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 3; i++) takeTokenRequest(1, 3, t0);
    let refused: unknown;
    try {
      takeTokenRequest(1, 3, t0);
    } catch (e) {
      refused = e;
    }
    // 3 a minute: one request comes back every 20 s.
    expect(refused).toMatchObject({ status: 429, code: "rate_limited", headers: { "Retry-After": "20" } });
    // Another token has its own bucket.
    expect(() => takeTokenRequest(2, 3, t0)).not.toThrow();
    expect(() => takeTokenRequest(1, 3, t0 + 19_000)).toThrow(expect.objectContaining({ status: 429, headers: { "Retry-After": "1" } }));
    expect(() => takeTokenRequest(1, 3, t0 + 20_000)).not.toThrow();
    // 0: no limit.
    for (let i = 0; i < 1_000; i++) takeTokenRequest(3, 0, t0);
  });

  it("is applied by authorize to every request of a token, from API_TOKEN_RATE_LIMIT_PER_MINUTE", async () => {
    useTestEnv({ API_TOKEN_RATE_LIMIT_PER_MINUTE: "2" });
    try {
      const { token } = await createApiToken(db, { userId: adminId, scope: "read" });
      await authorizeRequest(db, request(token));
      await authorizeRequest(db, request(token));
      await expect(authorizeRequest(db, request(token))).rejects.toMatchObject({ status: 429, headers: { "Retry-After": "30" } });
    } finally {
      useTestEnv({ API_TOKEN_RATE_LIMIT_PER_MINUTE: "0" });
    }
  });
});

describe("tokens made before scopes (migration 0023)", () => {
  it("keep working with their user's full rights and no expiry", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-token-migration-"));
    try {
      // The migrations as they were before 0023: the journal without it, the files up to it.
      const before = path.join(dir, "migrations");
      mkdirSync(path.join(before, "meta"), { recursive: true });
      const source = path.join(process.cwd(), "db", "migrations");
      const journal = JSON.parse(readFileSync(path.join(source, "meta", "_journal.json"), "utf8")) as { entries: { idx: number; tag: string }[] };
      journal.entries = journal.entries.filter((e) => e.idx < 23);
      writeFileSync(path.join(before, "meta", "_journal.json"), JSON.stringify(journal));
      for (const f of readdirSync(source).filter((f) => f.endsWith(".sql"))) copyFileSync(path.join(source, f), path.join(before, f));

      const file = path.join(dir, "old.db");
      const old = new Database(file);
      migrate(drizzle(old), { migrationsFolder: before });
      const token = `cb_${"x".repeat(43)}`;
      old.prepare("INSERT INTO users (email, password_hash, role, created_ms, updated_ms) VALUES ('old@example.com', 'x', 'viewer', 1, 1)").run();
      old.prepare("INSERT INTO api_tokens (user_pk, name, token_hash, prefix, created_ms) VALUES (1, 'old', ?, 'cb_xxx', 1)").run(hashToken(token));
      expect(old.prepare("SELECT * FROM api_tokens").get()).not.toHaveProperty("scope");
      old.close();

      const upgraded = openDatabase(file);
      try {
        const caller = await authorizeRequest(upgraded, request(token, "POST", "http://localhost/api/v1/alerts"));
        expect(caller).toEqual({ userId: 1, email: "old@example.com", role: "viewer", appPks: [] });
        expect((await listApiTokens(upgraded))[0]).toMatchObject({ scope: "full", expiresMs: null, revoked: false });
      } finally {
        upgraded.$client.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
