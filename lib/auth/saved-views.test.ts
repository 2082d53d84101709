import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { listAudit } from "./audit";
import type { Caller } from "./caller";
import { createView, listViews, removeView } from "./saved-views";
import { freshDb, seedApp, useTestEnv } from "./test-support";
import { createUser } from "./users";

let ctx: ReturnType<typeof freshDb>;
let db: Db;
let ann: Caller;
let bob: Caller;
let admin: Caller;

beforeAll(async () => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  const app = seedApp(db, "alpha");
  const a = await createUser(db, { email: "ann@example.test", password: "a-long-password-1", role: "viewer", apps: ["alpha"] });
  const b = await createUser(db, { email: "bob@example.test", password: "a-long-password-2", role: "viewer", apps: ["alpha"] });
  const c = await createUser(db, { email: "root@example.test", password: "a-long-password-3", role: "admin" });
  ann = { userId: a.id, email: a.email, role: "viewer", appPks: [app.pk] };
  bob = { userId: b.id, email: b.email, role: "viewer", appPks: [app.pk] };
  admin = { userId: c.id, email: c.email, role: "admin", appPks: "all" };
});
afterAll(() => ctx.dispose());

describe("saved views", () => {
  it("are one's own until shared; only filter names are kept", async () => {
    const own = createView(db, ann, { name: "Video this week", path: "/calls", query: "?type=video&tz=Asia%2FKolkata&page=3&evil=1" });
    expect(own.query).toBe("type=video&tz=Asia%2FKolkata");
    createView(db, ann, { name: "Team", path: "/", query: "status=ended", shared: true });
    expect(listViews(db, ann).map((v) => v.name)).toEqual(["Team", "Video this week"]);
    expect(listViews(db, bob).map((v) => [v.name, v.owner, v.mine])).toEqual([["Team", "ann@example.test", false]]);
    expect(await listAudit(db, { action: "view.create" })).toHaveLength(2);
  });

  it("refuse a bad name or page, and are removed only by their owner or an admin", async () => {
    expect(() => createView(db, ann, { name: " ", path: "/calls", query: "" })).toThrow(/name/);
    expect(() => createView(db, ann, { name: "x", path: "/settings", query: "" })).toThrow(/path/);
    const team = listViews(db, bob)[0];
    expect(() => removeView(db, bob, team.id)).toThrow(/no such view/);
    removeView(db, admin, team.id);
    expect(listViews(db, bob)).toEqual([]);
    expect((await listAudit(db, { action: "view.remove" }))[0].actor).toBe("root@example.test");
  });
});
