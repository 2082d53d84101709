/**
 * Sync: runs per app with their numbers, "Sync now" for admins (audited), never for
 * viewers (no button, and the API answers 403).
 */
import { expect, test } from "@playwright/test";
import { demoState, signIn } from "./fixture";
import { cookieHeader } from "./ops-helpers";

test("the sync page lists the demo's runs per app", async ({ page }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/sync");
  await expect(page.getByRole("heading", { level: 1, name: "Sync" })).toBeVisible();
  for (const app of state.emulator.apps) {
    const row = page.locator(`[data-testid="sync-runs"] tr[data-app="${app.appId}"]`).last();
    await expect(row).toContainText("succeeded");
    await expect(row).toContainText("Demo");
    await expect(page.locator(`li[data-app="${app.appId}"]`)).toBeVisible();
  }
});

test("an admin's Sync now runs a sync, shows its result and is audited", async ({ page }) => {
  const state = demoState();
  const app = state.emulator.apps[1] ?? state.emulator.apps[0];
  await signIn(page, state.admin);
  await page.goto("/sync");
  await page.locator("#sync-now-app").selectOption(app.appId);
  await page.getByTestId("sync-now").click();
  await expect(page.getByTestId("sync-result")).toContainText(app.appId, { timeout: 30_000 });
  await expect(page.getByTestId("sync-result")).toContainText(/done in|still running/);
  const first = page.locator('[data-testid="sync-runs"] tbody tr').first();
  await expect(first).toHaveAttribute("data-app", app.appId);
  await expect(first).toContainText("Sync now");
  await page.goto("/settings/audit");
  await expect(page.locator("tbody tr").first()).toContainText("app.sync");
  await expect(page.locator("tbody tr").first()).toContainText(app.appId);
});

test("viewers see their runs but cannot sync: no button, 403 from the API", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.viewer);
  await page.goto("/sync");
  await expect(page.getByRole("heading", { level: 1, name: "Sync" })).toBeVisible();
  await expect(page.getByTestId("sync-now")).toHaveCount(0);
  const cookie = await cookieHeader(page);
  const runs = (await (await request.get("/api/v1/sync", { headers: { cookie } })).json()) as { data: Array<{ appId: string }>; apps: Array<{ appId: string }> };
  expect(runs.data.length).toBeGreaterThan(0);
  for (const r of [...runs.data, ...runs.apps]) expect(state.viewer.apps).toContain(r.appId);
  const res = await request.post("/api/v1/sync", { headers: { cookie, origin: new URL(page.url()).origin, "content-type": "application/json" }, data: {} });
  expect(res.status()).toBe(403);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
});

test("the sync API: 401 without a session, 400 on bad input, 404 for an unknown app", async ({ page, request }) => {
  expect((await request.post("/api/v1/sync", { data: {} })).status()).toBe(401);
  expect((await request.get("/api/v1/sync")).status()).toBe(401);
  const state = demoState();
  await signIn(page, state.admin);
  const cookie = await cookieHeader(page);
  expect((await request.get("/api/v1/sync?limit=0", { headers: { cookie } })).status()).toBe(400);
  expect((await request.get("/api/v1/sync?status=weird", { headers: { cookie } })).status()).toBe(400);
  const notJson = await request.post("/api/v1/sync", { headers: { cookie, origin: new URL(page.url()).origin, "content-type": "application/json" }, data: "{nope" });
  expect(notJson.status()).toBe(400);
  const unknown = await request.post("/api/v1/sync", { headers: { cookie, origin: new URL(page.url()).origin, "content-type": "application/json" }, data: { app: "no-such-app" } });
  expect(unknown.status()).toBe(404);
});
