import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { createTenantApp } from "@/lib/apps/tenant-create";
import { getAppById, appConnection } from "@/lib/apps/registry";
import type { CreatedApp } from "@/lib/platform/management-client";
import { audit, listAudit } from "./audit";
import type { Caller } from "./authorize";
import { freshDb, useTestEnv } from "./test-support";

let ctx: ReturnType<typeof freshDb>;
let db: Db;
const admin: Caller = { userId: 7, email: "root@example.com", role: "admin", appPks: "all" };
const viewer: Caller = { userId: 8, email: "v@example.com", role: "viewer", appPks: [] };

beforeAll(() => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
});
afterAll(() => ctx.dispose());

describe("audit log", () => {
  it("records actor, action, target, details and time, newest first", async () => {
    const t0 = Date.now();
    await audit(db, admin, "user.update", "bob@example.com", { role: "viewer" });
    await audit(db, { email: "cli" }, "token.revoke", "token 3");
    const [latest, earlier] = await listAudit(db);
    expect(latest).toMatchObject({ actor: "cli", actorUserId: null, action: "token.revoke", target: "token 3", details: null });
    expect(earlier).toMatchObject({ actor: "root@example.com", actorUserId: 7, action: "user.update", details: { role: "viewer" } });
    expect(earlier.atMs).toBeGreaterThanOrEqual(t0);
    expect(await listAudit(db, { action: "user.update" })).toHaveLength(1);
    expect(await listAudit(db, { before: latest.id })).toHaveLength(1);
  });

  it("never stores something that looks like a secret", async () => {
    await audit(db, admin, "app.update", "alpha", { apiKey: "SECRET-1", nested: { webhookPassword: "SECRET-2", token: "SECRET-3" }, passwordSet: true, name: "ok" });
    const dump = JSON.stringify(db.$client.prepare("SELECT * FROM audit_log").all());
    expect(dump).not.toMatch(/SECRET-/);
    expect((await listAudit(db, { limit: 1 }))[0].details).toMatchObject({ apiKey: "[redacted]", passwordSet: true, name: "ok" });
  });
});

describe("createTenantApp", () => {
  const credentials = { managementUrl: "http://platform.invalid/management", key: "MGMT-KEY", secret: "MGMT-SECRET" };
  const fake = (answer: Partial<CreatedApp>) => async (): Promise<CreatedApp> => ({ appId: "newapp", apiKey: "NEW-API-KEY-123", region: "eu", raw: {}, ...answer });

  it("creates on the platform, registers with the returned key encrypted, audits, and never echoes the key", async () => {
    let sent: unknown;
    const view = await createTenantApp(db, admin, { name: "New app", region: "eu", callsUrl: "http://127.0.0.1:4010/{appId}/v3" }, {
      credentials,
      createApp: async (creds, input) => {
        sent = { creds, input };
        return fake({})();
      },
    });
    expect(sent).toEqual({ creds: credentials, input: { name: "New app", version: "1.0", region: "eu" } });
    expect(view).toMatchObject({ appId: "newapp", name: "New app", region: "eu", apiKey: "…-123", callsUrl: "http://127.0.0.1:4010/newapp/v3" });
    expect(JSON.stringify(view)).not.toContain("NEW-API-KEY");
    const row = getAppById(db, "newapp")!;
    expect(row.apiKeyEnc).not.toContain("NEW-API-KEY");
    expect(appConnection(row).apiKey).toBe("NEW-API-KEY-123");
    expect((await listAudit(db, { action: "app.create_tenant" }))[0]).toMatchObject({ actor: "root@example.com", target: "newapp" });
    expect(JSON.stringify(db.$client.prepare("SELECT * FROM audit_log").all())).not.toMatch(/NEW-API-KEY|MGMT-/);
  });

  it("is admin-only, needs configured credentials, and refuses an answer without a key", async () => {
    await expect(createTenantApp(db, viewer, { name: "x", region: "us" }, { credentials, createApp: fake({ appId: "v1" }) })).rejects.toMatchObject({ status: 403 });
    await expect(createTenantApp(db, admin, { name: "x", region: "us" })).rejects.toMatchObject({ status: 409, code: "not_configured" });
    await expect(createTenantApp(db, admin, { name: "x", region: "us" }, { credentials, createApp: fake({ appId: "nokey", apiKey: null }) })).rejects.toMatchObject({ status: 502 });
    expect(getAppById(db, "nokey")).toBeUndefined();
    await expect(createTenantApp(db, { email: "cli" }, { name: "dup", region: "us" }, { credentials, createApp: fake({}) })).rejects.toMatchObject({ status: 409 });
  });
});
