/** The demo home page in Chromium: signed in, it lists the synced apps with their counts. */
import { expect, test } from "@playwright/test";
import { demoState, signIn } from "./fixture";

test("the home page lists every synced app with its call count", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/");
  for (const app of state.emulator.apps) {
    const row = page.locator(`tr[data-app="${app.appId}"]`);
    await expect(row).toBeVisible();
    const shown = Number((await row.getByTestId("calls").innerText()).replace(/[^0-9]/g, ""));
    expect(shown).toBeGreaterThan(0);
    // The same number the API serves from the warehouse.
    const cookies = await page.context().cookies();
    const res = await request.get(`/api/v1/usage/apps?app=${encodeURIComponent(app.appId)}`, {
      headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; ") },
    });
    expect(res.status()).toBe(200);
    const body = (await res.json()) as { data: Array<{ app: string; calls: number }> };
    expect(body.data.find((d) => d.app === app.appId)?.calls).toBe(shown);
  }
});

test("health is open and says the warehouse is readable", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { status: string; database: string; lastSyncAt: string | null };
  expect(body).toMatchObject({ status: "ok", database: "ok" });
  expect(body.lastSyncAt).not.toBeNull();
});
