/**
 * Price sheets and statement numbers on both places Callboard's state can live (issue 26):
 * the same answers on SQLite and Postgres, and two servers on one Postgres taking turns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { stateTransaction, tablesOf } from "@/db/state";
import { listAudit } from "@/lib/auth/audit";
import { freshState, seedApp, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { nextStatementNumber } from "./issue";
import { listPriceSheets, removePriceSheet, setPriceSheet, termsInForce } from "./price-sheets";

const ACTOR = { email: "cli" };
const prices = { currency: "USD", audioPerMinute: "0.004", videoPerMinute: "0.0125", perRecording: "0.05" };

describe.each(STATE_DIALECTS)("billing state (on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let alpha: number;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    alpha = (await seedApp(db, "alpha")).pk;
    await seedApp(db, "Zeta");
  });
  afterAll(() => ctx.dispose());

  it("sets, replaces, lists and removes price sheets, each audited; the terms in force follow the months", async () => {
    await setPriceSheet(db, ACTOR, { app: null, effectiveMonth: "2025-01", ...prices });
    await setPriceSheet(db, ACTOR, { app: "alpha", effectiveMonth: "2025-07", ...prices, audioPerMinute: "0.0035" });
    await setPriceSheet(db, ACTOR, { app: "Zeta", effectiveMonth: "2025-03", ...prices });
    const replaced = await setPriceSheet(db, ACTOR, { app: "alpha", effectiveMonth: "2025-07", ...prices, audioPerMinute: "0.003", monthlyMinimum: "10" });
    expect(replaced).toMatchObject({ app: "alpha", appName: "App alpha", audioPerMinute: "0.003", monthlyMinimum: "10.00", updatedBy: "cli" });
    // The default first, then app ids in code-point order (a capital before a small letter).
    expect((await listPriceSheets(db)).map((s) => [s.app, s.effectiveMonth])).toEqual([[null, "2025-01"], ["Zeta", "2025-03"], ["alpha", "2025-07"]]);
    expect((await listPriceSheets(db, { app: "alpha" })).map((s) => s.app)).toEqual([null, "alpha"]);
    expect(await termsInForce(db, alpha, "2025-06")).toMatchObject({ scope: "default", audioPerMinute: "0.004" });
    expect(await termsInForce(db, alpha, "2025-08")).toMatchObject({ scope: "app", audioPerMinute: "0.003" });
    await removePriceSheet(db, ACTOR, { app: "Zeta", effectiveMonth: "2025-03" });
    await expect(removePriceSheet(db, ACTOR, { app: "Zeta", effectiveMonth: "2025-03" })).rejects.toMatchObject({ status: 404 });
    await expect(setPriceSheet(db, ACTOR, { app: "nope", effectiveMonth: "2025-03", ...prices })).rejects.toMatchObject({ status: 404 });
    expect((await listAudit(db)).filter((e) => e.action.startsWith("price.")).map((e) => e.action)).toEqual(["price.remove", "price.set", "price.set", "price.set", "price.set"]);
  });

  it("refuses to change the prices of an issued month, and changes nothing", async () => {
    const { statements } = tablesOf(db);
    await db.insert(statements).values({
      number: 1000, appPk: alpha, appId: "alpha", appName: "App alpha", month: "2025-08", timeZone: "UTC", currency: "USD", total: "0.00", body: {}, issuedMs: Date.now(), issuedBy: "cli",
    });
    await expect(setPriceSheet(db, ACTOR, { app: "alpha", effectiveMonth: "2025-08", ...prices })).rejects.toMatchObject({ status: 409 });
    await expect(removePriceSheet(db, ACTOR, { app: "alpha", effectiveMonth: "2025-07" })).rejects.toThrow(/issued/);
    expect((await listPriceSheets(db, { app: "alpha" })).map((s) => s.effectiveMonth)).toEqual(["2025-01", "2025-07"]);
  });

  it("gives gapless statement numbers to issues running at once on two servers", async () => {
    // Two servers share Postgres; a SQLite file has one server (one connection per process:
    // a second one in the same process would wait synchronously for the first's lock).
    const servers = dialect === "postgres" ? [db, ctx.connect()] : [db];
    const { statements } = tablesOf(db);
    const issued = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        stateTransaction(servers[i % servers.length], async (tx) => {
          const number = await nextStatementNumber(tx);
          await tx.insert(tablesOf(tx).statements).values({
            number, appPk: alpha, appId: "alpha", appName: "App alpha", month: `2030-${String(i + 1).padStart(2, "0")}`, timeZone: "UTC", currency: "USD", total: "0.00", body: {}, issuedMs: Date.now(), issuedBy: "cli",
          });
          return number;
        }),
      ),
    );
    expect([...issued].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 1001 + i));
    expect((await db.select({ n: statements.number }).from(statements)).length).toBe(13);
  });
});
