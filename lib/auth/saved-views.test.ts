import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { listAudit } from "./audit";
import type { Caller } from "./caller";
import { createView, listViews, removeView } from "./saved-views";
import { freshState, seedApp, STATE_DIALECTS, useTestEnv } from "./test-support";
import { createUser } from "./users";

describe.each(STATE_DIALECTS)("saved views (state on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let ann: Caller;
  let bob: Caller;
  let admin: Caller;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    const appPk = (await seedApp(db, "alpha")).pk;
    const a = await createUser(db, { email: "ann@example.test", password: "a-long-password-1", role: "viewer", apps: ["alpha"] });
    const b = await createUser(db, { email: "bob@example.test", password: "a-long-password-2", role: "viewer", apps: ["alpha"] });
    const c = await createUser(db, { email: "root@example.test", password: "a-long-password-3", role: "admin" });
    ann = { userId: a.id, email: a.email, role: "viewer", appPks: [appPk] };
    bob = { userId: b.id, email: b.email, role: "viewer", appPks: [appPk] };
    admin = { userId: c.id, email: c.email, role: "admin", appPks: "all" };
  });
  afterAll(() => ctx.dispose());

  it("are one's own until shared; only filter names are kept", async () => {
    const own = await createView(db, ann, { name: "Video this week", path: "/calls", query: "?type=video&tz=Asia%2FKolkata&page=3&evil=1" });
    expect(own.query).toBe("type=video&tz=Asia%2FKolkata");
    await createView(db, ann, { name: "Team", path: "/", query: "status=ended", shared: true });
    // Names in code-point order on both dialects (a capital sorts before a small letter).
    await createView(db, ann, { name: "alpha only", path: "/calls", query: "appId=alpha" });
    expect((await listViews(db, ann)).map((v) => v.name)).toEqual(["Team", "Video this week", "alpha only"]);
    expect((await listViews(db, bob)).map((v) => [v.name, v.owner, v.mine])).toEqual([["Team", "ann@example.test", false]]);
    expect(await listAudit(db, { action: "view.create" })).toHaveLength(3);
  });

  it("refuse a bad name or page, and are removed only by their owner or an admin", async () => {
    await expect(createView(db, ann, { name: " ", path: "/calls", query: "" })).rejects.toThrow(/name/);
    await expect(createView(db, ann, { name: "x", path: "/settings", query: "" })).rejects.toThrow(/path/);
    const team = (await listViews(db, bob))[0];
    await expect(removeView(db, bob, team.id)).rejects.toThrow(/no such view/);
    await removeView(db, admin, team.id);
    expect(await listViews(db, bob)).toEqual([]);
    expect((await listAudit(db, { action: "view.remove" }))[0].actor).toBe("root@example.test");
  });

  it("are seen by another server at once", async () => {
    const other = ctx.connect();
    const made = await createView(other, bob, { name: "From B", path: "/participants", query: "tz=UTC", shared: true });
    expect((await listViews(db, ann)).find((v) => v.id === made.id)).toMatchObject({ name: "From B", owner: "bob@example.test", mine: false });
  });
});
