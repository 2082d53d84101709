import { count, eq, lt, type SQL } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { addApp } from "@/lib/apps/registry";
import { freshState, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { parseEnv } from "@/lib/config/env";
import { pruneOnce } from "./prune";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27);

describe.each(STATE_DIALECTS)("retention of the audit log and sync runs (issue 27, item 10), state on %s", (dialect) => {
  let db: Db;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    useTestEnv();
    const state = await freshState(dialect);
    db = state.db;
    dispose = state.dispose;
    const acme = await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" });
    const idle = await addApp(db, { appId: "idle", name: "Idle", region: "us", apiKey: "key-idle-0001" });
    const { auditLog, syncRuns } = tablesOf(db);
    const audit = Array.from({ length: 5000 }, (_, d) => ({ atMs: NOW - (d * DAY) / 10, actorEmail: "a@b.c", action: `day-${d}` })); // 500 days, ten a day
    for (let i = 0; i < audit.length; i += 1000) await db.insert(auditLog).values(audit.slice(i, i + 1000));
    const run = (appPk: number, status: "succeeded" | "running" | "failed", startedMs: number) => ({ appPk, kind: "incremental" as const, trigger: "schedule" as const, status, startedMs });
    await db.insert(syncRuns).values([
      ...Array.from({ length: 201 }, (_, i) => run(acme.pk, "succeeded", NOW - (200 - i) * DAY)),
      run(acme.pk, "running", NOW - 150 * DAY), // a run still marked running is never pruned here
      run(idle.pk, "failed", NOW - 300 * DAY), // an app's latest run stays, however old
    ]);
  });

  afterEach(async () => {
    await dispose();
  });

  const countAudit = async (where?: SQL) => {
    const { auditLog } = tablesOf(db);
    const [row] = await db.select({ n: count() }).from(auditLog).where(where);
    return row!.n;
  };
  const countRuns = async (where: SQL | undefined) => {
    const { syncRuns } = tablesOf(db);
    const [row] = await db.select({ n: count() }).from(syncRuns).where(where);
    return row!.n;
  };

  it("prunes audit rows and sync runs past their kept days, in batches, and keeps each app's latest run", async () => {
    const { auditLog, syncRuns, apps } = tablesOf(db);
    const pruned = await pruneOnce(db, { auditDays: 365, syncRunsDays: 90 }, NOW);
    expect(await countAudit(lt(auditLog.atMs, NOW - 365 * DAY))).toBe(0);
    expect(await countAudit()).toBe(3651);
    expect(pruned.audit).toBe(5000 - 3651);
    expect(await countRuns(eq(syncRuns.status, "succeeded"))).toBe(91);
    expect(await countRuns(eq(syncRuns.status, "running"))).toBe(1);
    const [idle] = await db.select({ pk: apps.pk }).from(apps).where(eq(apps.appId, "idle"));
    expect(await countRuns(eq(syncRuns.appPk, idle!.pk))).toBe(1);
    expect(pruned.syncRuns).toBe(201 - 91);
  });

  it("keeps everything at 0 days", async () => {
    expect(await pruneOnce(db, { auditDays: 0, syncRunsDays: 0 }, NOW)).toEqual({ audit: 0, syncRuns: 0 });
    expect(await countAudit()).toBe(5000);
  });
});

describe("retention settings", () => {
  it("has documented defaults: deliveries 90 days, audit forever, sync runs 90 days", () => {
    const e = parseEnv({ AUTH_SECRET: "x".repeat(32) });
    expect([e.RETAIN_DELIVERIES_DAYS, e.RETAIN_AUDIT_DAYS, e.RETAIN_SYNC_RUNS_DAYS]).toEqual([90, 0, 90]);
    expect(() => parseEnv({ AUTH_SECRET: "x".repeat(32), RETAIN_AUDIT_DAYS: "a year" })).toThrow(/RETAIN_AUDIT_DAYS: must be a whole number/);
  });
});
