/**
 * Issue 29 #6, keyboard and phone: a skip link first, the focus on the new page's heading
 * after moving through the header, arrow keys on a filter's dropdown not applying every
 * option they pass, and the filters folded on a phone so the report starts on the first screen.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

test("the first Tab offers Skip to content, which lands in the page", async ({ page }) => {
  await page.goto("/calls?tz=UTC");
  await ready(page);
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator("main#main")).toBeFocused();
});

test("after moving through the header the focus is on the new page's heading", async ({ page }) => {
  await page.goto("/calls?tz=UTC");
  await ready(page);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Participants", exact: true }).click();
  await expect(page).toHaveURL(/\/participants/);
  await expect(page.getByRole("heading", { level: 1 })).toBeFocused();
});

test("arrow keys on a dropdown apply the option they rest on, not every one they pass", async ({ page }) => {
  await page.goto("/calls?tz=UTC");
  await ready(page);
  // Every filter change is a history entry: record the entries the keys make.
  await page.evaluate(() => {
    const w = window as unknown as { pushed: string[] };
    w.pushed = [];
    const push = history.pushState.bind(history);
    history.pushState = (data: unknown, unused: string, url?: string | URL | null) => {
      if (url) w.pushed.push(String(url));
      push(data, unused, url);
    };
  });
  const status = page.getByLabel("Status");
  await status.focus();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await expect(page).toHaveURL(/status=rejected/);
  await page.waitForLoadState("networkidle");
  // Only the option the keys rested on was applied (not ended, then ongoing, then rejected).
  const pushed = await page.evaluate(() => (window as unknown as { pushed: string[] }).pushed);
  expect(pushed.map((u) => new URL(u, "http://x").searchParams.get("status"))).toEqual(["rejected"]);
});

test("on a phone the filters fold behind one button", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/calls?tz=UTC&type=video");
  await ready(page);
  const toggle = page.getByRole("button", { name: "Filters (1 set)" });
  await expect(toggle).toBeVisible();
  await expect(page.getByLabel("Status")).toBeHidden();
  // The report starts on the first screen.
  const panel = await page.getByTestId("panel-call-totals").boundingBox();
  expect(panel!.y).toBeLessThan(844);
  await toggle.click();
  await expect(page.getByLabel("Status")).toBeVisible();
  await expect(page.getByRole("button", { name: "Hide filters" })).toHaveAttribute("aria-expanded", "true");
});
