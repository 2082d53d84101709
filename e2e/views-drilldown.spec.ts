/**
 * Issue 29 #7: saved views (per person, shareable) and drill-down (a breakdown value or a
 * day's bar filters the page to it).
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE, VIEWER_STATE } from "./storage";

test.describe("as the admin", () => {
  test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

  test("a breakdown value and a day's bar filter the overview to them", async ({ page }) => {
    await page.goto("/?tz=UTC");
    await ready(page);
    await page.locator('[data-dimension="type"]').getByRole("button", { name: "Video" }).click();
    await expect(page).toHaveURL(/[?&]type=video(&|$)/);
    await page.getByLabel("Period").selectOption({ label: "Last 30 days" });
    await expect(page).toHaveURL(/from=\d+/);
    // A day with calls (a day without has no bar to select).
    const bars = page.getByTestId("chart-calls-per-day").locator(".recharts-bar-rectangle path");
    await expect(bars.first()).toBeAttached();
    let tallest = 0;
    let best = 0;
    for (let i = 0; i < (await bars.count()); i++) {
      const h = (await bars.nth(i).boundingBox())?.height ?? 0;
      if (h > tallest) [tallest, best] = [h, i];
    }
    await bars.nth(best).click();
    // One day: to - from is 24 hours.
    await expect(page).toHaveURL((u) => Number(u.searchParams.get("to")) - Number(u.searchParams.get("from")) === 86_400);
    await expect(page).toHaveURL(/type=video/);
  });

  test("a view is saved, shared, opened by another user, and removed", async ({ page, browser }) => {
    await page.goto("/calls?tz=Asia/Kolkata&type=audio");
    await ready(page);
    const views = page.getByTestId("saved-views");
    await views.getByRole("button", { name: "Save view…" }).click();
    await views.getByLabel("Name").fill("Audio in Kolkata");
    await views.getByLabel("Share with every user").check();
    await views.getByRole("button", { name: "Save", exact: true }).click();
    await expect(views.getByLabel("Saved view")).toHaveValue(/\d+/);

    // The viewer opens it from another page: the page and its filters come back.
    const viewer = await browser.newContext({ storageState: VIEWER_STATE, timezoneId: "UTC" });
    const other = await viewer.newPage();
    await other.goto("/participants");
    await ready(other);
    await other.getByTestId("saved-views").getByLabel("Saved view").selectOption({ label: "Audio in Kolkata (by admin@callboard.demo)" });
    await expect(other).toHaveURL((u) => u.pathname === "/calls" && u.searchParams.get("type") === "audio" && u.searchParams.get("tz") === "Asia/Kolkata");
    // Not the viewer's to remove.
    await expect(other.getByTestId("saved-views").getByRole("button", { name: "Remove view" })).toHaveCount(0);
    await viewer.close();

    await views.getByRole("button", { name: "Remove view" }).click();
    await expect(views.getByLabel("Saved view").locator("option", { hasText: "Audio in Kolkata" })).toHaveCount(0);
  });
});
