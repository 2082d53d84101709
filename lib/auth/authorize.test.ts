import { and, eq } from "drizzle-orm";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { calls } from "@/db/schema";
import { toErrorResponse } from "@/lib/http/errors";
import {
  appScope,
  appScopeCondition,
  assertAppVisible,
  authorizeRequest,
  canSeeApp,
  requireAdmin,
  resolveVisibleApp,
  resolveVisibleAppPks,
  visibleAppPks,
  type Caller,
} from "./authorize";
import { endSession } from "./ended-sessions";
import { ensureFirstAdmin } from "./first-admin";
import { SECURE_SESSION_COOKIE, SESSION_COOKIE } from "./session-token";
import { freshDb, seedApp, seedCall, TEST_SECRET, useTestEnv } from "./test-support";
import { createUser, getUserByEmail, listUsers, removeUser, updateUser } from "./users";

let ctx: ReturnType<typeof freshDb>;
let db: Db;
let alpha: number;
let beta: number;

beforeAll(() => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  alpha = seedApp(db, "alpha").pk;
  beta = seedApp(db, "beta").pk;
  seedCall(db, alpha, "s-alpha-1");
  seedCall(db, alpha, "s-alpha-2");
  seedCall(db, beta, "s-beta-1");
});
afterAll(() => ctx.dispose());

async function sessionCookie(
  email: string,
  opts: { secure?: boolean; secret?: string; epoch?: number; maxAge?: number; sid?: string | null } = {},
): Promise<string> {
  const user = (await getUserByEmail(db, email))!;
  const name = opts.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  const sid = opts.sid === undefined ? `sid-${Math.random().toString(36).slice(2)}` : opts.sid;
  const jwt = await encode({
    token: { sub: String(user.pk), email: user.email, epoch: opts.epoch ?? user.sessionEpoch, ...(sid === null ? {} : { sid }) },
    secret: opts.secret ?? TEST_SECRET,
    salt: name,
    maxAge: opts.maxAge,
  });
  return `${name}=${jwt}`;
}

const withCookie = (cookie: string) => new Request("http://localhost/api/v1/calls", { headers: { cookie } });

describe("first admin", () => {
  it("is created from CALLBOARD_ADMIN_EMAIL/PASSWORD when there is no user, once", async () => {
    expect(await listUsers(db)).toEqual([]);
    await expect(authorizeRequest(db, new Request("http://localhost/"))).rejects.toMatchObject({ status: 401 });
    expect(await listUsers(db)).toMatchObject([{ email: "first-admin@example.com", role: "admin" }]);
    expect(await ensureFirstAdmin(db)).toBe("exists");
    expect(await listUsers(db)).toHaveLength(1);
  });

  it("is not created without the variables", async () => {
    const other = freshDb();
    try {
      useTestEnv({ CALLBOARD_ADMIN_EMAIL: undefined, CALLBOARD_ADMIN_PASSWORD: undefined });
      expect(await ensureFirstAdmin(other.db)).toBe("unconfigured");
      expect(await listUsers(other.db)).toEqual([]);
    } finally {
      useTestEnv();
      other.dispose();
    }
  });
});

describe("authorize", () => {
  beforeAll(async () => {
    await createUser(db, { email: "viewer-a@example.com", password: "viewer-password", role: "viewer", apps: ["alpha"] });
    await createUser(db, { email: "viewer-none@example.com", password: "viewer-password", role: "viewer" });
  });

  it("answers 401 {error:{code:'unauthorized'}} without credentials", async () => {
    const e = await authorizeRequest(db, new Request("http://localhost/api/v1/calls")).catch((x: unknown) => x);
    const res = toErrorResponse(e);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("reads the next-auth session cookie (plain and __Secure-)", async () => {
    const admin = await authorizeRequest(db, withCookie(await sessionCookie("first-admin@example.com")));
    expect(admin).toMatchObject({ email: "first-admin@example.com", role: "admin", appPks: "all" });
    const viewer = await authorizeRequest(db, withCookie(`other=1; ${await sessionCookie("viewer-a@example.com", { secure: true })}`));
    expect(viewer).toMatchObject({ email: "viewer-a@example.com", role: "viewer", appPks: [alpha] });
  });

  it("rejects forged, foreign-secret, expired and stale-epoch sessions", async () => {
    const good = await sessionCookie("viewer-a@example.com");
    const forged = good.slice(0, -6) + "AAAAAA";
    const foreign = await sessionCookie("viewer-a@example.com", { secret: "another-secret-another-secret-another-secret" });
    const expired = await sessionCookie("viewer-a@example.com", { maxAge: -60 });
    const stale = await sessionCookie("viewer-a@example.com", { epoch: 99 });
    const noSid = await sessionCookie("viewer-a@example.com", { sid: null });
    for (const c of [forged, foreign, expired, stale, noSid, "authjs.session-token=garbage"]) {
      await expect(authorizeRequest(db, withCookie(c))).rejects.toMatchObject({ status: 401 });
    }
  });

  it("ends a signed-out session for good, even in a renewed cookie, and only that one", async () => {
    const signedOut = await sessionCookie("viewer-a@example.com", { sid: "sid-signed-out" });
    const renewed = await sessionCookie("viewer-a@example.com", { sid: "sid-signed-out", maxAge: 3600 });
    const otherDevice = await sessionCookie("viewer-a@example.com", { sid: "sid-other-device" });
    expect(await authorizeRequest(db, withCookie(signedOut))).toMatchObject({ email: "viewer-a@example.com" });
    await endSession(db, "sid-signed-out");
    for (const c of [signedOut, renewed]) await expect(authorizeRequest(db, withCookie(c))).rejects.toMatchObject({ status: 401 });
    expect(await authorizeRequest(db, withCookie(otherDevice))).toMatchObject({ email: "viewer-a@example.com" });
  });

  it("re-reads the user every time: disable, grant change, password change and removal apply at once", async () => {
    const cookie = await sessionCookie("viewer-a@example.com");
    await updateUser(db, "viewer-a@example.com", { apps: ["alpha", "beta"] });
    expect((await authorizeRequest(db, withCookie(cookie))).appPks).toEqual([alpha, beta]);
    await updateUser(db, "viewer-a@example.com", { apps: ["alpha"] });

    const u = await createUser(db, { email: "temp@example.com", password: "temp-password" });
    const tempCookie = await sessionCookie("temp@example.com");
    await updateUser(db, u.id, { disabled: true });
    await expect(authorizeRequest(db, withCookie(tempCookie))).rejects.toMatchObject({ status: 401 });
    await updateUser(db, u.id, { disabled: false });
    // The session issued before the disable stays dead (epoch moved on).
    await expect(authorizeRequest(db, withCookie(tempCookie))).rejects.toMatchObject({ status: 401 });
    const fresh = await sessionCookie("temp@example.com");
    expect((await authorizeRequest(db, withCookie(fresh))).email).toBe("temp@example.com");
    await updateUser(db, u.id, { password: "changed-password" });
    await expect(authorizeRequest(db, withCookie(fresh))).rejects.toMatchObject({ status: 401 });
    const afterChange = await sessionCookie("temp@example.com");
    await removeUser(db, u.id);
    await expect(authorizeRequest(db, withCookie(afterChange))).rejects.toMatchObject({ status: 401 });
  });
});

describe("tenant isolation helpers", () => {
  const admin: Caller = { userId: 1, email: "a@x", role: "admin", appPks: "all" };
  const viewerA = (): Caller => ({ userId: 2, email: "v@x", role: "viewer", appPks: [alpha] });
  const nobody: Caller = { userId: 3, email: "n@x", role: "viewer", appPks: [] };

  it("restricts inside the SQL: a viewer's query only ever reads granted apps", () => {
    const sessions = (c: Caller, extra?: ReturnType<typeof eq>) =>
      db
        .select({ s: calls.sessionId })
        .from(calls)
        .where(and(appScopeCondition(c, calls.appPk), extra))
        .all()
        .map((r) => r.s)
        .sort();
    expect(sessions(admin)).toEqual(["s-alpha-1", "s-alpha-2", "s-beta-1"]);
    expect(sessions(viewerA())).toEqual(["s-alpha-1", "s-alpha-2"]);
    expect(sessions(viewerA(), eq(calls.appPk, beta))).toEqual([]);
    expect(sessions(nobody)).toEqual([]);
  });

  it("answers 404 for an app the caller may not see, exactly as for one that does not exist", () => {
    expect(resolveVisibleApp(db, viewerA(), "alpha").pk).toBe(alpha);
    const hidden = (() => { try { resolveVisibleApp(db, viewerA(), "beta"); } catch (e) { return e; } })();
    const missing = (() => { try { resolveVisibleApp(db, viewerA(), "zeta"); } catch (e) { return e; } })();
    expect(hidden).toMatchObject({ status: 404, code: "not_found" });
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
    expect(() => assertAppVisible(viewerA(), beta)).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => assertAppVisible(admin, beta)).not.toThrow();
    expect(() => resolveVisibleAppPks(db, viewerA(), ["alpha", "beta"])).toThrow(expect.objectContaining({ status: 404 }));
    expect(resolveVisibleAppPks(db, admin, ["alpha", "beta", "alpha"])).toEqual([alpha, beta]);
  });

  it("gives scopes, lists and the admin check", () => {
    expect(canSeeApp(viewerA(), alpha)).toBe(true);
    expect(canSeeApp(viewerA(), beta)).toBe(false);
    expect(appScope(admin)).toBe("all");
    expect(appScope(viewerA())).toEqual([alpha]);
    expect(visibleAppPks(db, admin).sort()).toEqual([alpha, beta].sort());
    expect(visibleAppPks(db, nobody)).toEqual([]);
    expect(() => requireAdmin(viewerA())).toThrow(expect.objectContaining({ status: 403 }));
    expect(() => requireAdmin(admin)).not.toThrow();
  });
});
