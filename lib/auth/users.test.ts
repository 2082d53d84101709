import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { HttpError } from "@/lib/http/errors";
import { verifyPassword } from "./passwords";
import { freshState, seedAppRow, STATE_DIALECTS, useTestEnv } from "./test-support";
import { createUser, getUserByEmail, listUsers, removeUser, updateUser } from "./users";

async function expectHttp(p: Promise<unknown> | (() => unknown), status: number): Promise<HttpError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(status);
    return e as HttpError;
  }
  throw new Error(`expected HttpError ${status}`);
}

describe.each(STATE_DIALECTS)("users (state on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    await seedAppRow(db, "alpha");
    await seedAppRow(db, "beta");
  });
  afterAll(() => ctx.dispose());

  it("stores an argon2id hash, never the password, and normalises the email", async () => {
    const u = await createUser(db, { email: "  Ada@Example.COM ", password: "correct horse", role: "admin" });
    expect(u.email).toBe("ada@example.com");
    const { users } = tablesOf(db);
    const [row] = await db.select().from(users).where(eq(users.pk, u.id));
    if (!row) throw new Error("the user was not stored");
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordHash).not.toContain("correct horse");
    expect(await verifyPassword(row.passwordHash, "correct horse")).toBe(true);
    expect(await verifyPassword(row.passwordHash, "wrong")).toBe(false);
    expect(JSON.stringify(u)).not.toContain("argon2");
  });

  it("grants viewers apps by app id and rejects unknown apps", async () => {
    const v = await createUser(db, { email: "viewer@example.com", password: "viewer-pass", role: "viewer", apps: ["beta", "alpha"] });
    expect(v.apps).toEqual(["alpha", "beta"]);
    const e = await expectHttp(createUser(db, { email: "x@example.com", password: "whatever1", apps: ["nope"] }), 400);
    expect(e.message).toContain("nope");
    expect(await getUserByEmail(db, "x@example.com")).toBeUndefined();
  });

  it("refuses duplicates, short passwords and bad roles with clear errors", async () => {
    await expectHttp(createUser(db, { email: "ADA@example.com", password: "another-pass" }), 409);
    const e = await expectHttp(createUser(db, { email: "short@example.com", password: "123" }), 400);
    expect(e.message).toMatch(/at least 8/);
    await expectHttp(createUser(db, { email: "role@example.com", password: "12345678", role: "root" as "admin" }), 400);
    await expectHttp(createUser(db, { email: "not-an-email", password: "12345678" }), 400);
  });

  it("updates role, grants and disabled; a password change or disable moves the session epoch", async () => {
    const before = (await getUserByEmail(db, "viewer@example.com"))!;
    const u1 = await updateUser(db, "viewer@example.com", { apps: ["alpha"] });
    expect(u1.apps).toEqual(["alpha"]);
    expect((await getUserByEmail(db, "viewer@example.com"))!.sessionEpoch).toBe(before.sessionEpoch);
    await updateUser(db, before.pk, { password: "a-new-password" });
    const after = (await getUserByEmail(db, "viewer@example.com"))!;
    expect(after.sessionEpoch).toBe(before.sessionEpoch + 1);
    expect(await verifyPassword(after.passwordHash, "a-new-password")).toBe(true);
    await updateUser(db, before.pk, { disabled: true });
    expect((await getUserByEmail(db, "viewer@example.com"))!.sessionEpoch).toBe(before.sessionEpoch + 2);
    await updateUser(db, before.pk, { disabled: false, role: "admin" });
    expect((await listUsers(db)).find((u) => u.id === before.pk)).toMatchObject({ role: "admin", disabled: false });
    await updateUser(db, before.pk, { role: "viewer" });
  });

  it("never leaves the warehouse without an enabled admin", async () => {
    const admins = (await listUsers(db)).filter((u) => u.role === "admin" && !u.disabled);
    expect(admins).toHaveLength(1);
    await expectHttp(updateUser(db, admins[0].id, { role: "viewer" }), 409);
    await expectHttp(updateUser(db, admins[0].id, { disabled: true }), 409);
    await expectHttp(async () => await removeUser(db, admins[0].id), 409);
  });

  it("removes a user with their grants", async () => {
    const u = await createUser(db, { email: "gone@example.com", password: "12345678", apps: ["alpha"] });
    await removeUser(db, "gone@example.com");
    expect(await getUserByEmail(db, u.email)).toBeUndefined();
    await expectHttp(async () => await removeUser(db, "gone@example.com"), 404);
    const { userAppGrants } = tablesOf(db);
    expect(await db.select().from(userAppGrants).where(eq(userAppGrants.userPk, u.id))).toEqual([]);
  });
});
