import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { parseEnv, resetEnvForTests } from "@/lib/config/env";
import { getHealth } from "./health";
import { syncMaxAgeSeconds } from "./sync-age";

describe("stale syncs in readiness (issue 27, item 5)", () => {
  it("lists apps whose last good sync is older than the age, counting a never-synced app from when it was added", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-sync-age-"));
    process.env.AUTH_SECRET = "sync-age-suite-secret-0123456789abcdef";
    resetEnvForTests();
    const db = openDatabase(path.join(dir, "warehouse.db"));
    try {
      const now = Date.now();
      for (const appId of ["fresh", "old", "never"]) await addApp(db, { appId, name: appId, region: "us", apiKey: `key-${appId}-0001` });
      db.$client.prepare("UPDATE apps SET last_successful_sync_ms = ? WHERE app_id = 'fresh'").run(now - 60_000);
      db.$client.prepare("UPDATE apps SET last_successful_sync_ms = ? WHERE app_id = 'old'").run(now - 7_200_000);
      db.$client.prepare("UPDATE apps SET created_ms = ? WHERE app_id = 'never'").run(now - 7_200_000);
      const h = getHealth(() => db, { syncMaxAgeSeconds: 3600, nowMs: now });
      expect(h.status).toBe("ok");
      expect(h.staleSyncs).toEqual([
        { app: "never", lastGoodSyncAt: null, ageSeconds: 7200 },
        { app: "old", lastGoodSyncAt: new Date(now - 7_200_000).toISOString(), ageSeconds: 7200 },
      ]);
      expect(getHealth(() => db, { nowMs: now }).staleSyncs).toBeUndefined();
    } finally {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("defaults to three schedule intervals, off when the schedule is off, and takes SYNC_MAX_AGE_SECONDS", () => {
    const base = { AUTH_SECRET: "x".repeat(32) };
    expect(syncMaxAgeSeconds(parseEnv(base))).toBe(900);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_INTERVAL_SECONDS: "0" }))).toBe(0);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_INTERVAL_SECONDS: "0", SYNC_MAX_AGE_SECONDS: "7200" }))).toBe(7200);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_MAX_AGE_SECONDS: "0" }))).toBe(0);
  });
});
