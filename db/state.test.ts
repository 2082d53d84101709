import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { freshState, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { isPostgresState, isUniqueViolation, stateTransaction, tablesOf, tryStateWrite } from "./state";

/**
 * db/state.ts, on the SQLite file and on a real Postgres: the handle the state modules
 * query through (docs/decisions/0042-state-queries-in-two-dialects.md).
 */
describe.each(STATE_DIALECTS)("state handle (%s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
  });
  afterAll(() => ctx.dispose());

  const failuresOf = async (key: string) => {
    const { signinFailures } = tablesOf(db);
    return db.select().from(signinFailures).where(eq(signinFailures.key, key));
  };

  it("knows its dialect and gives that dialect's tables", () => {
    expect(isPostgresState(db)).toBe(dialect === "postgres");
    expect(tablesOf(db).users).toBeDefined();
    if (dialect === "postgres") expect(() => tablesOf(db).calls).toThrow(/not one of Callboard's state tables/);
    else expect(tablesOf(db).calls).toBeDefined();
  });

  it("commits a transaction's statements together", async () => {
    const result = await stateTransaction(db, async (tx) => {
      const { signinFailures } = tablesOf(tx);
      await tx.insert(signinFailures).values({ key: "tx:commit", atMs: 1 });
      await tx.insert(signinFailures).values({ key: "tx:commit", atMs: 2 });
      return "done";
    });
    expect(result).toBe("done");
    expect(await failuresOf("tx:commit")).toHaveLength(2);
  });

  it("rolls all of them back when the callback throws, and passes the error on", async () => {
    await expect(
      stateTransaction(db, async (tx) => {
        const { signinFailures } = tablesOf(tx);
        await tx.insert(signinFailures).values({ key: "tx:rollback", atMs: 1 });
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await failuresOf("tx:rollback")).toEqual([]);
  });

  it("runs transactions started together one after the other, each complete", async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        stateTransaction(db, async (tx) => {
          const { signinFailures } = tablesOf(tx);
          await tx.insert(signinFailures).values({ key: "tx:many", atMs: i });
          await tx.insert(signinFailures).values({ key: "tx:many", atMs: 100 + i });
        }),
      ),
    );
    expect(await failuresOf("tx:many")).toHaveLength(16);
  });

  it("recognises a unique violation in either dialect's words", async () => {
    const { users } = tablesOf(db);
    const row = { email: "twice@example.com", passwordHash: "h", role: "viewer" as const, createdMs: 1, updatedMs: 1 };
    await db.insert(users).values(row);
    const error = await db.insert(users).values(row).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(new Error("something else"))).toBe(false);
  });

  it("tryStateWrite runs a write, and answers false instead of failing when it cannot", async () => {
    const { signinFailures, userAppGrants } = tablesOf(db);
    expect(await tryStateWrite(db, db.insert(signinFailures).values({ key: "try:ok", atMs: 1 }))).toBe(true);
    expect(await failuresOf("try:ok")).toHaveLength(1);
    if (dialect === "postgres") {
      // A grant of a user and an app that do not exist: the foreign keys refuse it.
      expect(await tryStateWrite(db, db.insert(userAppGrants).values({ userPk: 999_999, appPk: 999_999 }))).toBe(false);
    }
  });
});
