import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { listAudit } from "./audit";
import type { Caller } from "./caller";
import { callerPreferences, getPreferences, savePreferences } from "./preferences";
import { freshState, seedApp, STATE_DIALECTS, useTestEnv } from "./test-support";
import { createUser, updateUser } from "./users";

describe.each(STATE_DIALECTS)("a person's defaults (state on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let viewer: Caller;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    const alpha = (await seedApp(db, "alpha")).pk;
    await seedApp(db, "beta");
    const user = await createUser(db, { email: "v@example.test", password: "a-long-password-1", role: "viewer", apps: ["alpha"] });
    viewer = { userId: user.id, email: user.email, role: "viewer", appPks: [alpha] };
  });
  afterAll(() => ctx.dispose());

  it("start empty, save, and are audited", async () => {
    expect(await getPreferences(db, viewer.userId)).toEqual({ timeZone: null, apps: [] });
    expect(await savePreferences(db, viewer, { timeZone: "Asia/Kolkata", apps: ["alpha"] })).toEqual({ timeZone: "Asia/Kolkata", apps: ["alpha"] });
    // A partial save keeps the rest.
    expect(await savePreferences(db, viewer, { timeZone: null })).toEqual({ timeZone: null, apps: ["alpha"] });
    const entries = await listAudit(db, { action: "preferences.update" });
    expect(entries).toHaveLength(2);
    expect(entries[0].actor).toBe("v@example.test");
    // Another server reads what this one saved.
    expect(await getPreferences(ctx.connect(), viewer.userId)).toEqual({ timeZone: null, apps: ["alpha"] });
  });

  it("refuse a zone that is not one and an app the person cannot see, changing nothing", async () => {
    await expect(savePreferences(db, viewer, { timeZone: "Mars/Base" })).rejects.toThrow(/timeZone/);
    await expect(savePreferences(db, viewer, { apps: ["beta"] })).rejects.toThrow(/not an app you can see/);
    await expect(savePreferences(db, viewer, { colour: "blue" })).rejects.toThrow();
    expect(await getPreferences(db, viewer.userId)).toEqual({ timeZone: null, apps: ["alpha"] });
  });

  it("leave out an app since revoked when a page applies them", async () => {
    await updateUser(db, viewer.userId, { apps: [] });
    expect((await callerPreferences(db, { ...viewer, appPks: [] })).apps).toEqual([]);
  });
});
