import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { authorizeRequest } from "./authorize";
import { verifyCredentials } from "./credentials";
import { endSession } from "./ended-sessions";
import { SESSION_COOKIE } from "./session-token";
import { freshState, seedAppRow, STATE_DIALECTS, TEST_SECRET, useTestEnv } from "./test-support";
import { checkThrottle, THROTTLE } from "./throttle";
import { createApiToken, revokeApiToken } from "./tokens";
import { createUser, removeUser, updateUser } from "./users";

/**
 * Two Callboard servers over one state store (issue 26): each request's session and token
 * check reads the shared state, so what one server changes — a sign-out, a revoked
 * token, a removed or disabled user, a role, sign-in failures — applies on the other at
 * its very next request, with nothing cached in between. "Server A" and "server B" are
 * two handles (two connection pools on Postgres, two connections on the SQLite file).
 */
describe.each(STATE_DIALECTS)("two servers over one state store (%s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let serverA: Db;
  let serverB: Db;
  let alpha: number;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    serverA = ctx.db;
    serverB = ctx.connect();
    alpha = await seedAppRow(serverA, "alpha");
    await seedAppRow(serverA, "beta");
    await createUser(serverA, { email: "admin@example.com", password: "admin-password", role: "admin" });
  });
  afterAll(() => ctx.dispose());

  async function sessionCookie(user: { id: number; email: string }, sid: string, epoch = 0): Promise<string> {
    const jwt = await encode({ token: { sub: String(user.id), email: user.email, epoch, sid }, secret: TEST_SECRET, salt: SESSION_COOKIE });
    return `${SESSION_COOKIE}=${jwt}`;
  }
  const withCookie = (cookie: string) => new Request("http://localhost/api/v1/calls", { headers: { cookie } });
  const bearer = (token: string) => new Request("http://localhost/api/v1/calls", { headers: { authorization: `Bearer ${token}` } });

  it("a session signed out on A is refused by B at once; the user's other session stays", async () => {
    const user = await createUser(serverA, { email: "sam@example.com", password: "sam-password", role: "viewer", apps: ["alpha"] });
    const phone = await sessionCookie(user, "sid-phone");
    const laptop = await sessionCookie(user, "sid-laptop");
    expect(await authorizeRequest(serverB, withCookie(phone))).toEqual({ userId: user.id, email: user.email, role: "viewer", appPks: [alpha] });

    await endSession(serverA, "sid-phone");
    await expect(authorizeRequest(serverB, withCookie(phone))).rejects.toMatchObject({ status: 401 });
    await expect(authorizeRequest(serverA, withCookie(phone))).rejects.toMatchObject({ status: 401 });
    expect((await authorizeRequest(serverB, withCookie(laptop))).userId).toBe(user.id);
  });

  it("a token made on A works on B; revoked on B, A refuses it at once", async () => {
    const user = await createUser(serverA, { email: "script@example.com", password: "script-password", role: "viewer" });
    const { token, view } = await createApiToken(serverA, { userId: user.id, name: "export" });
    expect((await authorizeRequest(serverB, bearer(token))).email).toBe("script@example.com");

    await revokeApiToken(serverB, view.id);
    await expect(authorizeRequest(serverA, bearer(token))).rejects.toMatchObject({ status: 401 });
  });

  it("a user removed on A loses its sessions and tokens on B at once; a role or grant change applies on B's next request", async () => {
    const user = await createUser(serverA, { email: "temp@example.com", password: "temp-password", role: "viewer" });
    const { token } = await createApiToken(serverA, { userId: user.id });
    const cookie = await sessionCookie(user, "sid-temp");
    expect((await authorizeRequest(serverB, bearer(token))).appPks).toEqual([]);

    await updateUser(serverA, user.id, { apps: ["alpha"] });
    expect((await authorizeRequest(serverB, bearer(token))).appPks).toEqual([alpha]);
    await updateUser(serverA, user.id, { role: "admin" });
    expect((await authorizeRequest(serverB, withCookie(cookie))).appPks).toBe("all");

    await removeUser(serverA, user.id);
    await expect(authorizeRequest(serverB, bearer(token))).rejects.toMatchObject({ status: 401 });
    await expect(authorizeRequest(serverB, withCookie(cookie))).rejects.toMatchObject({ status: 401 });
  });

  it("a user disabled on B is refused by A, by session and by token", async () => {
    const user = await createUser(serverA, { email: "dora@example.com", password: "dora-password", role: "viewer" });
    const { token } = await createApiToken(serverA, { userId: user.id });
    const cookie = await sessionCookie(user, "sid-dora");
    await updateUser(serverB, user.id, { disabled: true });
    await expect(authorizeRequest(serverA, bearer(token))).rejects.toMatchObject({ status: 401 });
    await expect(authorizeRequest(serverA, withCookie(cookie))).rejects.toMatchObject({ status: 401 });
  });

  it("sign-in failures count across servers: failures on A throttle the same account and address on B", async () => {
    await createUser(serverA, { email: "vic@example.com", password: "vic-password", role: "viewer" });
    const address = "203.0.113.90";
    for (let i = 0; i < THROTTLE.perAccountAndAddress; i++) {
      const server = i % 2 === 0 ? serverA : serverB;
      expect(await verifyCredentials(server, { email: "vic@example.com", password: "wrong-password", address })).toEqual({ ok: false, reason: "invalid" });
    }
    expect(await checkThrottle(serverB, { email: "vic@example.com", address })).toMatchObject({ limited: true, scope: "account_address" });
    // Even the right password, on either server, from that address.
    expect(await verifyCredentials(serverB, { email: "vic@example.com", password: "vic-password", address })).toMatchObject({ ok: false, reason: "throttled" });
    expect(await verifyCredentials(serverA, { email: "vic@example.com", password: "vic-password", address })).toMatchObject({ ok: false, reason: "throttled" });
  });

  it("two servers creating the same user at once: one succeeds, the other gets 409", async () => {
    const results = await Promise.allSettled([
      createUser(serverA, { email: "race@example.com", password: "race-password-a" }),
      createUser(serverB, { email: "race@example.com", password: "race-password-b" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.status === "rejected" && refused.reason).toMatchObject({ status: 409, code: "conflict" });
  });
});
