/**
 * Alert rules, their evaluation and their notifications on both places Callboard's state
 * can live (issue 26). On Postgres two servers evaluate and deliver at the same time: each
 * window is evaluated once and each notification sent once.
 *
 * The facts a rule measures are not what this suite tests (evaluate.integration.test.ts
 * holds them to a synced warehouse): its engine answers a fixed number of calls per window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import type { AnalyticsEngine } from "@/lib/analytics/engine";
import { listAudit } from "@/lib/auth/audit";
import type { Caller } from "@/lib/auth/caller";
import { freshState, seedApp, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { createUser } from "@/lib/auth/users";
import { evaluateDueRules, upcomingEvaluations } from "./evaluate";
import { firingCount, listHistory } from "./history";
import { deliverDue } from "./outbox";
import { checkAppsVisible, createRule, deleteRule, getRule, listRules, updateRule } from "./rules";
import { startReceiver, type Receiver } from "./test-receiver";

const HOUR = 3600;
const T0 = 1_780_000_000 - (1_780_000_000 % HOUR);
/** Answers once `together` servers have asked, all at once: every one measures before any records. */
function callsPerWindow(n: number, together: number): AnalyticsEngine {
  let waiting: Array<() => void> = [];
  return {
    report: async () => {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length >= together) {
          for (const go of waiting) go();
          waiting = [];
        }
      });
      return { current: { calls: n, audioMinutes: 0, videoMinutes: 0, avgDurationSeconds: 0 } };
    },
  } as unknown as AnalyticsEngine;
}

describe.each(STATE_DIALECTS)("alerts state (on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let admin: Caller;
  let viewer: Caller;
  let receiver: Receiver;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    const alpha = (await seedApp(db, "alpha")).pk;
    await seedApp(db, "beta");
    const a = await createUser(db, { email: "ops@example.test", password: "a-long-password-1", role: "admin" });
    const v = await createUser(db, { email: "v@example.test", password: "a-long-password-2", role: "viewer", apps: ["alpha"] });
    admin = { userId: a.id, email: a.email, role: "admin", appPks: "all" };
    viewer = { userId: v.id, email: v.email, role: "viewer", appPks: [alpha] };
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx.dispose();
  });

  it("creates, lists, changes and removes rules, audited; a viewer sees only the rules of their apps", async () => {
    const { rule } = await createRule(db, admin, { name: "alpha busy", metric: "calls", filters: { app: ["alpha"] }, windowSeconds: HOUR, condition: { op: "above", value: 10 } });
    const { rule: all } = await createRule(db, admin, { name: "every app", metric: "calls", windowSeconds: HOUR, condition: { op: "above", value: 10 } });
    expect((await listRules(db, admin)).map((r) => r.name)).toEqual(["every app", "alpha busy"]);
    expect((await listRules(db, viewer)).map((r) => r.name)).toEqual(["alpha busy"]);
    await expect(getRule(db, viewer, all.id)).rejects.toMatchObject({ status: 404 });
    await expect(checkAppsVisible(db, viewer, ["beta"])).rejects.toMatchObject({ status: 404 });
    await expect(createRule(db, admin, { name: "x", metric: "calls", filters: { app: ["nope"] }, windowSeconds: HOUR, condition: { op: "above", value: 1 } })).rejects.toThrow(/not registered/);
    expect((await updateRule(db, admin, rule.id, { name: "alpha very busy" })).rule.name).toBe("alpha very busy");
    await deleteRule(db, admin, all.id);
    expect((await listRules(db, admin)).map((r) => r.name)).toEqual(["alpha very busy"]);
    expect((await listAudit(db)).filter((e) => e.action.startsWith("alert.")).map((e) => e.action)).toEqual(["alert.remove", "alert.update", "alert.create", "alert.create"]);
    await deleteRule(db, admin, rule.id);
  });

  it("evaluates a window once and sends its notification once, with two servers at it together", async () => {
    // Two servers share Postgres; a SQLite file has one server (see billing-state.test.ts).
    const servers = dialect === "postgres" ? [db, ctx.connect()] : [db];
    const { rule } = await createRule(db, admin, {
      name: "too many calls", metric: "calls", filters: { app: ["alpha"] }, windowSeconds: HOUR, condition: { op: "above", value: 10 },
      destination: { url: receiver.url, allowPrivate: true },
    });
    const nowMs = (T0 + 60) * 1000;
    const options = { nowMs, delaySeconds: 30, engine: callsPerWindow(25, servers.length * 2), baseUrl: "https://callboard.example" };
    const results = (await Promise.all([...servers, ...servers].map((s) => evaluateDueRules(s, options)))).flat();
    const mine = results.filter((r) => r.ruleId === rule.id);
    expect(mine.filter((r) => r.outcome === "fired")).toHaveLength(1);
    expect(mine.every((r) => r.outcome === "fired" || r.outcome === "skipped")).toBe(true);
    expect(await firingCount(db, admin)).toBe(1);
    expect((await upcomingEvaluations(db, { nowMs, delaySeconds: 30 })).find((u) => u.ruleId === rule.id)?.lastWindowTo).toBe(T0);

    const delivered = (await Promise.all([...servers, ...servers].map((s) => deliverDue(s, { nowMs, resolver: async () => [{ address: "127.0.0.1", family: 4 }] })))).flat();
    expect(delivered.filter((d) => d.status === "delivered")).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
    const [event] = await listHistory(db, admin, { ruleId: rule.id });
    expect(event).toMatchObject({ toState: "firing", value: 25, threshold: 10, notification: { status: "delivered", attempts: 1 } });
    // Viewers see the transition, not how its notification fared.
    expect((await listHistory(db, viewer, { ruleId: rule.id }))[0].notification).toBeNull();
    const { alertOutbox } = tablesOf(db);
    expect(await db.select().from(alertOutbox)).toHaveLength(1);
  });
});
