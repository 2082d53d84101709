import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { authorizeRequest } from "./authorize";
import { freshDb, useTestEnv } from "./test-support";
import { createApiToken, hashToken, listApiTokens, resolveApiToken, revokeApiToken } from "./tokens";
import { createUser, removeUser, updateUser } from "./users";

let ctx: ReturnType<typeof freshDb>;
let db: Db;
let userId: number;

beforeAll(async () => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  userId = (await createUser(db, { email: "script@example.com", password: "script-password", role: "viewer" })).id;
  await createUser(db, { email: "boss@example.com", password: "boss-password", role: "admin" });
});
afterAll(() => ctx.dispose());

const bearer = (token: string) => new Request("http://localhost/api/v1/calls", { headers: { authorization: `Bearer ${token}` } });

describe("API tokens", () => {
  it("are cb_ + 32 random bytes, shown once, stored only as a SHA-256", () => {
    const { token, view } = createApiToken(db, { userId, name: "finance export" });
    expect(token).toMatch(/^cb_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token.slice(3), "base64url")).toHaveLength(32);
    const dump = JSON.stringify(db.$client.prepare("SELECT * FROM api_tokens").all());
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(10));
    expect(dump).toContain(hashToken(token));
    expect(JSON.stringify(view)).not.toContain(token.slice(10));
    expect(view).toMatchObject({ name: "finance export", email: "script@example.com", revoked: false, lastUsedMs: null });
    expect(token.startsWith(view.prefix)).toBe(true);
  });

  it("resolve to their user, record last use, and carry exactly the user's rights", async () => {
    const { token, view } = createApiToken(db, { userId });
    expect(resolveApiToken(db, token)).toEqual({ tokenId: view.id, userId, scope: "full" });
    expect(listApiTokens(db, { userId }).find((t) => t.id === view.id)!.lastUsedMs).not.toBeNull();
    const caller = await authorizeRequest(db, bearer(token));
    expect(caller).toEqual({ userId, email: "script@example.com", role: "viewer", appPks: [] });
    await updateUser(db, userId, { role: "admin" });
    expect((await authorizeRequest(db, bearer(token))).role).toBe("admin");
    await updateUser(db, userId, { role: "viewer" });
  });

  it("stop working when revoked", async () => {
    const { token, view } = createApiToken(db, { userId });
    revokeApiToken(db, view.id);
    expect(resolveApiToken(db, token)).toBeNull();
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect(revokeApiToken(db, view.id).revoked).toBe(true); // idempotent
    expect(() => revokeApiToken(db, 99_999)).toThrow(/no token/);
  });

  it("stop working while their user is disabled, and die with a removed user", async () => {
    const { token } = createApiToken(db, { userId });
    await updateUser(db, userId, { disabled: true });
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401 });
    await updateUser(db, userId, { disabled: false });
    expect((await authorizeRequest(db, bearer(token))).email).toBe("script@example.com");
    removeUser(db, userId);
    await expect(authorizeRequest(db, bearer(token))).rejects.toMatchObject({ status: 401 });
    expect(listApiTokens(db, { userId })).toEqual([]);
  });

  it("reject malformed and unknown tokens without falling back to a cookie", async () => {
    for (const t of ["", "cb_", "cb_short", `cb_${"A".repeat(43)}`, "not-a-token"]) {
      expect(resolveApiToken(db, t)).toBeNull();
      await expect(authorizeRequest(db, bearer(t))).rejects.toMatchObject({ status: 401 });
    }
  });
});
