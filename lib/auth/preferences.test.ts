import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { listAudit } from "./audit";
import type { Caller } from "./caller";
import { callerPreferences, getPreferences, savePreferences } from "./preferences";
import { freshDb, seedApp, useTestEnv } from "./test-support";
import { createUser, updateUser } from "./users";

let ctx: ReturnType<typeof freshDb>;
let db: Db;
let viewer: Caller;

beforeAll(async () => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  const alpha = seedApp(db, "alpha");
  seedApp(db, "beta");
  const user = await createUser(db, { email: "v@example.test", password: "a-long-password-1", role: "viewer", apps: ["alpha"] });
  viewer = { userId: user.id, email: user.email, role: "viewer", appPks: [alpha.pk] };
});
afterAll(() => ctx.dispose());

describe("a person's defaults", () => {
  it("start empty, save, and are audited", async () => {
    expect(getPreferences(db, viewer.userId)).toEqual({ timeZone: null, apps: [] });
    expect(savePreferences(db, viewer, { timeZone: "Asia/Kolkata", apps: ["alpha"] })).toEqual({ timeZone: "Asia/Kolkata", apps: ["alpha"] });
    // A partial save keeps the rest.
    expect(savePreferences(db, viewer, { timeZone: null })).toEqual({ timeZone: null, apps: ["alpha"] });
    const entries = await listAudit(db, { action: "preferences.update" });
    expect(entries).toHaveLength(2);
    expect(entries[0].actor).toBe("v@example.test");
  });

  it("refuse a zone that is not one and an app the person cannot see, changing nothing", () => {
    expect(() => savePreferences(db, viewer, { timeZone: "Mars/Base" })).toThrow(/timeZone/);
    expect(() => savePreferences(db, viewer, { apps: ["beta"] })).toThrow(/not an app you can see/);
    expect(() => savePreferences(db, viewer, { colour: "blue" })).toThrow();
    expect(getPreferences(db, viewer.userId)).toEqual({ timeZone: null, apps: ["alpha"] });
  });

  it("leave out an app since revoked when a page applies them", async () => {
    await updateUser(db, viewer.userId, { apps: [] });
    expect(callerPreferences(db, { ...viewer, appPks: [] }).apps).toEqual([]);
  });
});
