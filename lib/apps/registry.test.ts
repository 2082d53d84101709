import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { isPostgresState, tablesOf } from "@/db/state";
import { freshState, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { basicAuthHeader, checkBasicAuth } from "@/lib/ingest/auth";
import { acquireLock, releaseLock } from "@/lib/locks/sync-lock";
import { acquireLease, releaseLease } from "@/lib/locks/postgres-lease";
import { addApp, appConnection, getAppById, listApps, removeApp, updateApp, webhookAuthSettings } from "./registry";

/**
 * The apps registry on the SQLite file and on Postgres (issue 26, decision 0035 §5 step 2),
 * with two handles on one store ("server A" and "server B"): an app and its secrets
 * registered on one server are there, readable under the same AUTH_SECRET, on the other.
 */
describe.each(STATE_DIALECTS)("the apps registry (%s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let serverA: Db;
  let serverB: Db;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    serverA = ctx.db;
    serverB = ctx.connect();
  });
  afterAll(() => ctx.dispose());

  const webhookAccepts = async (db: Db, appId: string, user: string, password: string) => {
    const settings = await webhookAuthSettings(db, appId);
    if (!settings) throw new Error(`no app ${appId}`);
    return checkBasicAuth(basicAuthHeader(user, password), { username: settings.webhookUsername, passwordEnc: settings.webhookPasswordEnc });
  };

  it("keeps the API key and webhook password encrypted, and both servers read them back", async () => {
    const added = await addApp(serverA, {
      appId: "acme", name: "Acme", region: "eu", apiKey: "acme-api-key-SECRET-1234", callsUrl: "http://127.0.0.1:9/v3/",
      webhookUsername: "hook", webhookPassword: "acme-hook-SECRET",
    });
    expect(added).toMatchObject({ appId: "acme", apiKeyLast4: "1234", callsUrl: "http://127.0.0.1:9/v3", webhookEnabled: true, webhookUseBasicAuth: true });

    // At rest: ciphertext only, in the row either dialect stores.
    const { apps } = tablesOf(serverB);
    const [stored] = await serverB.select().from(apps).where(eq(apps.appId, "acme"));
    expect(JSON.stringify(stored)).not.toContain("SECRET");

    const onB = await getAppById(serverB, "acme");
    expect(onB?.pk).toBe(added.pk);
    expect(appConnection(onB!).apiKey).toBe("acme-api-key-SECRET-1234");
    expect(await webhookAccepts(serverB, "acme", "hook", "acme-hook-SECRET")).toBe(true);
    expect(await webhookAccepts(serverB, "acme", "hook", "wrong")).toBe(false);
    expect((await listApps(serverB)).map((a) => a.appId)).toContain("acme");
  });

  it("a change on B (new password, webhook off) is what A reads next", async () => {
    await addApp(serverA, { appId: "bolt", name: "Bolt", region: "us", apiKey: "bolt-key-0001", webhookUsername: "hook", webhookPassword: "old-password" });
    const updated = await updateApp(serverB, { appId: "bolt", webhookPassword: "new-password", webhookEnabled: false, name: "Bolt 2" });
    expect(updated).toMatchObject({ name: "Bolt 2", webhookEnabled: false });
    expect(await webhookAccepts(serverA, "bolt", "hook", "new-password")).toBe(true);
    expect(await webhookAccepts(serverA, "bolt", "hook", "old-password")).toBe(false);
    expect(await webhookAuthSettings(serverA, "bolt")).toMatchObject({ appId: "bolt", webhookEnabled: false, webhookUseBasicAuth: true });
    expect(await webhookAuthSettings(serverA, "nobody")).toBeUndefined();
  });

  it("refuses bad input and unknown apps with the registry's codes, storing nothing", async () => {
    await expect(addApp(serverA, { appId: "bad id!", name: "x", region: "us", apiKey: "k" })).rejects.toMatchObject({ code: "invalid" });
    await expect(addApp(serverA, { appId: "half", name: "x", region: "us", apiKey: "k", webhookUseBasicAuth: true })).rejects.toMatchObject({ code: "invalid" });
    await expect(updateApp(serverA, { appId: "ghost", name: "x" })).rejects.toMatchObject({ code: "not_found" });
    await expect(removeApp(serverA, "ghost")).rejects.toMatchObject({ code: "not_found" });
    expect(await getAppById(serverB, "half")).toBeUndefined();
  });

  it("two servers registering the same app id at once: one succeeds, the other gets a conflict", async () => {
    const results = await Promise.allSettled([
      addApp(serverA, { appId: "race", name: "Race A", region: "us", apiKey: "race-key-a" }),
      addApp(serverB, { appId: "race", name: "Race B", region: "us", apiKey: "race-key-b" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.status === "rejected" && refused.reason).toMatchObject({ code: "conflict" });
    expect((await listApps(serverA)).filter((a) => a.appId === "race")).toHaveLength(1);
  });

  it("does not remove an app another server is syncing; removes it once that sync let go", async () => {
    const app = await addApp(serverA, { appId: "busy", name: "Busy", region: "us", apiKey: "busy-key-0001" });
    // Server B holds the app's sync lock (the SQLite lock; on Postgres the lease).
    const owner = "other-host:4242:feedbeef";
    const release = isPostgresState(serverB)
      ? (await acquireLease((serverB as unknown as PgDb).$client, app.pk, owner, 60_000), () => releaseLease((serverB as unknown as PgDb).$client, app.pk, owner))
      : (acquireLock(serverB, app.pk, owner), async () => releaseLock(serverB, app.pk, owner));
    await expect(removeApp(serverA, "busy")).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining("being synced") });
    expect(await getAppById(serverA, "busy")).toBeDefined();

    await release();
    await removeApp(serverA, "busy");
    expect(await getAppById(serverB, "busy")).toBeUndefined();
  });
});
