import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { tablesOf } from "@/db/state";
import { addApp } from "@/lib/apps/registry";
import { freshState, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { parseEnv } from "@/lib/config/env";
import { getHealth } from "./health";
import { syncAges, syncMaxAgeSeconds } from "./sync-age";

describe.each(STATE_DIALECTS)("stale syncs in readiness (issue 27, item 5), state on %s", (dialect) => {
  it("lists apps whose last good sync is older than the age, counting a never-synced app from when it was added", async () => {
    useTestEnv();
    const state = await freshState(dialect);
    const db = state.db;
    try {
      const now = Date.now();
      for (const appId of ["fresh", "old", "never"]) await addApp(db, { appId, name: appId, region: "us", apiKey: `key-${appId}-0001` });
      const { apps } = tablesOf(db);
      await db.update(apps).set({ lastSuccessfulSyncMs: now - 60_000 }).where(eq(apps.appId, "fresh"));
      await db.update(apps).set({ lastSuccessfulSyncMs: now - 7_200_000 }).where(eq(apps.appId, "old"));
      await db.update(apps).set({ createdMs: now - 7_200_000 }).where(eq(apps.appId, "never"));
      const h = await getHealth(() => db, { syncMaxAgeSeconds: 3600, nowMs: now });
      expect(h.status).toBe("ok");
      expect(h.staleSyncs).toEqual([
        { app: "never", lastGoodSyncAt: null, ageSeconds: 7200 },
        { app: "old", lastGoodSyncAt: new Date(now - 7_200_000).toISOString(), ageSeconds: 7200 },
      ]);
      expect(h.lastSyncAt).toBe(new Date(now - 60_000).toISOString());
      expect((await getHealth(() => db, { nowMs: now })).staleSyncs).toBeUndefined();
      expect((await syncAges(db, now)).map((a) => [a.appId, a.ageSeconds])).toEqual([["fresh", 60], ["never", 7200], ["old", 7200]]);
    } finally {
      await state.dispose();
    }
  });

  it("says the state store is unreadable (503 material) when it cannot be reached", async () => {
    useTestEnv();
    const state = await freshState(dialect);
    await state.dispose(); // closed file / ended pool: every read fails
    const h = await getHealth(() => state.db);
    expect(h).toEqual({ status: "unavailable", database: "unreadable", lastSyncAt: null });
  });

  it("defaults to three schedule intervals, off when the schedule is off, and takes SYNC_MAX_AGE_SECONDS", () => {
    const base = { AUTH_SECRET: "x".repeat(32) };
    expect(syncMaxAgeSeconds(parseEnv(base))).toBe(900);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_INTERVAL_SECONDS: "0" }))).toBe(0);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_INTERVAL_SECONDS: "0", SYNC_MAX_AGE_SECONDS: "7200" }))).toBe(7200);
    expect(syncMaxAgeSeconds(parseEnv({ ...base, SYNC_MAX_AGE_SECONDS: "0" }))).toBe(0);
  });
});
