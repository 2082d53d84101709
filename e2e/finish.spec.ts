/**
 * Small things that looked unfinished: the favicon, a viewer's 404 for another app's
 * call (a real 404, in the product's page), device ids set like the text around them.
 */
import { expect, test } from "@playwright/test";
import { demoState } from "./fixture";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE, VIEWER_STATE } from "./storage";

test("the favicon is served, before and after signing in", async ({ page, request }) => {
  const ico = await request.get("/favicon.ico");
  expect(ico.status()).toBe(200);
  expect(ico.headers()["content-type"]).toMatch(/image\//);
  await page.goto("/signin");
  const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(href).toBeTruthy();
  const icon = await request.get(href!);
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toMatch(/image\//);
});

test.describe("as a viewer", () => {
  test.use({ storageState: VIEWER_STATE });

  test("another app's call answers 404 with the product's own page", async ({ page, browser }) => {
    const state = demoState();
    const other = state.emulator.apps.find((a) => !state.viewer.apps.includes(a.appId))!;
    // A real call of that app, as an admin sees it.
    const admin = await browser.newContext({ storageState: ADMIN_STATE });
    const calls = (await (await admin.request.get(`/api/v1/calls?app=${other.appId}&perPage=1`)).json()) as { data: Array<{ sessionId: string }> };
    await admin.close();
    const sessionId = calls.data[0].sessionId;

    const res = await page.goto(`/calls/${encodeURIComponent(sessionId)}?app=${other.appId}`);
    expect(res?.status()).toBe(404);
    await expect(page.getByTestId("not-found")).toBeVisible();
    await expect(page.getByRole("heading", { level: 1, name: "Not found" })).toBeVisible();
    await expect(page.locator("body")).not.toContainText("This page could not be found");
    await expect(page.locator("body")).not.toContainText(sessionId);
    // An address that names nothing answers the same.
    expect((await page.goto("/calls/nothing-here?app=nothing"))?.status()).toBe(404);
  });
});

test.describe("as an admin", () => {
  test.use({ storageState: ADMIN_STATE });

  test("device ids are set at the size and on the baseline of the text beside them", async ({ page }) => {
    await page.goto("/calls?sort=participants");
    await ready(page);
    await page.locator("tbody tr[data-session]").first().getByRole("link").first().click();
    const row = page.getByTestId("panel-participants").locator("tbody tr").filter({ has: page.locator(".device-id") }).first();
    const device = row.locator(".device-id");
    const neighbour = row.locator("td").first();
    const style = async (l: typeof device) => l.evaluate((e) => ({ size: getComputedStyle(e).fontSize, align: getComputedStyle(e).verticalAlign }));
    const [d, n] = [await style(device), await style(neighbour)];
    expect(d.size).toBe(n.size);
    expect(d.align).toBe("baseline");
  });
});
