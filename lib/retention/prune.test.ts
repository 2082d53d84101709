import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { parseEnv, resetEnvForTests } from "@/lib/config/env";
import { pruneOnce } from "./prune";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27);

describe("retention of the audit log and sync runs (issue 27, item 10)", () => {
  let dir = "";
  let db: Db;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-retention-"));
    process.env.AUTH_SECRET = "retention-suite-secret-0123456789abcdef";
    resetEnvForTests();
    db = openDatabase(path.join(dir, "warehouse.db"));
    await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" });
    await addApp(db, { appId: "idle", name: "Idle", region: "us", apiKey: "key-idle-0001" });
    const audit = db.$client.prepare("INSERT INTO audit_log (at_ms, actor_email, action) VALUES (?, 'a@b.c', ?)");
    for (let d = 0; d < 5000; d++) audit.run(NOW - d * DAY / 10, `day-${d}`); // 500 days, ten a day
    const run = db.$client.prepare("INSERT INTO sync_runs (app_pk, kind, trigger, status, started_ms) VALUES ((SELECT pk FROM apps WHERE app_id = ?), 'incremental', 'schedule', ?, ?)");
    for (let d = 200; d >= 0; d--) run.run("acme", "succeeded", NOW - d * DAY);
    run.run("acme", "running", NOW - 150 * DAY); // a run still marked running is never pruned here
    run.run("idle", "failed", NOW - 300 * DAY); // an app's latest run stays, however old
  });

  afterEach(() => {
    db.$client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = (sql: string) => (db.$client.prepare(sql).get() as { n: number }).n;

  it("prunes audit rows and sync runs past their kept days, in batches, and keeps each app's latest run", () => {
    const pruned = pruneOnce(db, { auditDays: 365, syncRunsDays: 90 }, NOW);
    expect(count("SELECT count(*) AS n FROM audit_log WHERE at_ms < " + (NOW - 365 * DAY))).toBe(0);
    expect(count("SELECT count(*) AS n FROM audit_log")).toBe(3651);
    expect(pruned.audit).toBe(5000 - 3651);
    expect(count("SELECT count(*) AS n FROM sync_runs WHERE status = 'succeeded'")).toBe(91);
    expect(count("SELECT count(*) AS n FROM sync_runs WHERE status = 'running'")).toBe(1);
    expect(count("SELECT count(*) AS n FROM sync_runs WHERE app_pk = (SELECT pk FROM apps WHERE app_id = 'idle')")).toBe(1);
    expect(pruned.syncRuns).toBe(201 - 91);
  });

  it("keeps everything at 0 days", () => {
    expect(pruneOnce(db, { auditDays: 0, syncRunsDays: 0 }, NOW)).toEqual({ audit: 0, syncRuns: 0 });
    expect(count("SELECT count(*) AS n FROM audit_log")).toBe(5000);
  });

  it("has documented defaults: deliveries 90 days, audit forever, sync runs 90 days", () => {
    const e = parseEnv({ AUTH_SECRET: "x".repeat(32) });
    expect([e.RETAIN_DELIVERIES_DAYS, e.RETAIN_AUDIT_DAYS, e.RETAIN_SYNC_RUNS_DAYS]).toEqual([90, 0, 90]);
    expect(() => parseEnv({ AUTH_SECRET: "x".repeat(32), RETAIN_AUDIT_DAYS: "a year" })).toThrow(/RETAIN_AUDIT_DAYS: must be a whole number/);
  });
});
