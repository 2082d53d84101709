import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { authorizeRequest } from "./authorize";
import { freshState, STATE_DIALECTS, useTestEnv } from "./test-support";
import { createApiToken, hashToken, listApiTokens, resolveApiToken, revokeApiToken } from "./tokens";
import { createUser, removeUser, updateUser } from "./users";

const bearer = (token: string) => new Request("http://localhost/api/v1/calls", { headers: { authorization: `Bearer ${token}` } });

describe.each(STATE_DIALECTS)("API tokens (state on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let userId: number;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    userId = (await createUser(db, { email: "script@example.com", password: "script-password", role: "viewer" })).id;
    await createUser(db, { email: "boss@example.com", password: "boss-password", role: "admin" });
  });
  afterAll(() => ctx.dispose());

  it("are cb_ + 32 random bytes, shown once, stored only as a SHA-256", async () => {
    const { token, view } = await createApiToken(db, { userId, name: "finance export" });
    expect(token).toMatch(/^cb_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token.slice(3), "base64url")).toHaveLength(32);
    const dump = JSON.stringify(await db.select().from(tablesOf(db).apiTokens));
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(10));
    expect(dump).toContain(hashToken(token));
    expect(JSON.stringify(view)).not.toContain(token.slice(10));
    expect(view).toMatchObject({ name: "finance export", email: "script@example.com", revoked: false, lastUsedMs: null });
    expect(token.startsWith(view.prefix)).toBe(true);
  });

  it("resolve to their user, record last use, and carry exactly the user's rights", async () => {
    const { token, view } = await createApiToken(db, { userId });
    expect(await resolveApiToken(db, token)).toEqual({ tokenId: view.id, userId, scope: "full" });
    expect((await listApiTokens(db, { userId })).find((t) => t.id === view.id)!.lastUsedMs).not.toBeNull();
    const caller = await authorizeRequest(db, bearer(token));
    expect(caller).toEqual({ userId, email: "script@example.com", role: "viewer", appPks: [] });
    await updateUser(db, userId, { role: "admin" });
    expect((await authorizeRequest(db, bearer(token))).role).toBe("admin");
    await updateUser(db, userId, { role: "viewer" });
  });

  it("stop working when revoked", async () => {
    const { token, view } = await createApiToken(db, { userId });
    await revokeApiToken(db, view.id);
    expect(await resolveApiToken(db, token)).toBeNull();
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect((await revokeApiToken(db, view.id)).revoked).toBe(true); // idempotent
    await expect(revokeApiToken(db, 99_999)).rejects.toThrow(/no token/);
  });

  it("stop working while their user is disabled, and die with a removed user", async () => {
    const { token } = await createApiToken(db, { userId });
    await updateUser(db, userId, { disabled: true });
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401 });
    await updateUser(db, userId, { disabled: false });
    expect((await authorizeRequest(db, bearer(token))).email).toBe("script@example.com");
    await removeUser(db, userId);
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401 });
    expect(await listApiTokens(db, { userId })).toEqual([]);
  });

  it("reject malformed and unknown tokens without falling back to a cookie", async () => {
    for (const t of ["", "cb_", "cb_short", `cb_${"A".repeat(43)}`, "not-a-token"]) {
      expect(await resolveApiToken(db, t)).toBeNull();
      await expect(authorizeRequest(db, bearer(t))).rejects.toMatchObject({ status: 401 });
    }
  });
});
