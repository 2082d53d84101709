/**
 * Issue 29 §6, at a laptop's width: the header stays on one line once the alerts badge
 * shows (from 1180 px: a 1280 px window less its scrollbar and a longer count still fit),
 * and Tenant apps' comparison and clients tables show every app's column.
 */
import { expect, test, type Page } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

const ORIGIN = { origin: `http://localhost:${process.env.E2E_PORT ?? 3100}` };

/** A rule that fires on any day: fewer than a million calls. */
async function fireARule(page: Page): Promise<void> {
  const created = await page.request.post("/api/v1/alerts", {
    headers: ORIGIN,
    data: { name: `Always firing ${Date.now()}`, metric: "calls", windowSeconds: 86_400, condition: { op: "below", value: 1_000_000 }, minCalls: 0, filters: {} },
  });
  expect(created.status()).toBe(201);
  const { data } = (await created.json()) as { data: { id: number } };
  expect((await page.request.post("/api/v1/alerts/evaluate", { headers: ORIGIN, data: { id: data.id } })).status()).toBe(200);
}

test("the header keeps one line with the alerts badge showing, from 1180 px", async ({ page }) => {
  await fireARule(page);
  for (const width of [1180, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto("/calls?tz=UTC");
    await expect(page.getByTestId("alerts-badge")).toBeVisible();
    const nav = page.getByRole("navigation", { name: "Main" });
    const links = await nav.getByRole("link").evaluateAll((as) => as.map((a) => Math.round(a.getBoundingClientRect().top)));
    expect(new Set(links).size, `${width}px: the navigation on one line`).toBe(1);
    const navBox = (await nav.boundingBox())!;
    const signOut = (await page.getByRole("button", { name: "Sign out" }).boundingBox())!;
    expect(signOut.y, `${width}px: Sign out beside the navigation`).toBeLessThan(navBox.y + navBox.height);
    expect(signOut.x + signOut.width).toBeLessThanOrEqual(width);
  }
});

test("at 1280 px every app's column of Tenant apps' tables is in view", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/apps?tz=UTC");
  await ready(page);
  const tables = ["apps-table", "apps-quality", "clients-platform", "clients-sdk", "clients-media", "clients-videoMuted"];
  for (const id of tables) await expect(page.getByTestId(id)).toBeVisible();
  await page.waitForTimeout(200); // the scroll boxes measure themselves after hydration
  for (const id of tables) {
    const cut = await page.getByTestId(id).evaluate((table) => {
      const box = table.closest(".table-scroll")!;
      return box.scrollWidth - box.clientWidth;
    });
    expect(cut, `${id}: ${cut}px out of view`).toBeLessThanOrEqual(1);
  }
});
