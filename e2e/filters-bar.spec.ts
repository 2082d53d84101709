/**
 * The filter bar as people use it: the apps picker closes like a select (outside click,
 * Escape), the month presets, and the ops pages (Live, Events, Sync) filtering with the
 * same bar, zone and date format as the analytics pages, with no Apply button.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

test("the apps picker closes on a click outside it and on Escape", async ({ page }) => {
  await page.goto("/calls");
  await ready(page);
  const picker = page.getByTestId("app-picker");
  const summary = picker.locator("summary");
  await summary.click();
  await expect(picker).toHaveAttribute("open", "");
  await page.getByRole("heading", { level: 1 }).click();
  await expect(picker).not.toHaveAttribute("open");

  await summary.click();
  await picker.getByRole("checkbox").first().focus();
  await page.keyboard.press("Escape");
  await expect(picker).not.toHaveAttribute("open");
  await expect(summary).toBeFocused();
});

test("Month to date runs from the 1st through today; Previous month is the calendar month before this one", async ({ page }) => {
  await page.goto("/calls");
  await ready(page);
  const now = new Date();
  const y = now.getUTCFullYear(), m = now.getUTCMonth(), d = now.getUTCDate();
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);

  await page.getByLabel("Period").selectOption({ label: "Previous month" });
  await expect(page).toHaveURL(new RegExp(`[?&]from=${Date.UTC(y, m - 1, 1) / 1000}(&|$)`));
  await expect(page).toHaveURL(new RegExp(`[?&]to=${Date.UTC(y, m, 1) / 1000}(&|$)`));
  await expect(page.getByLabel("From")).toHaveValue(iso(Date.UTC(y, m - 1, 1)));
  await expect(page.getByLabel("To", { exact: true })).toHaveValue(iso(Date.UTC(y, m, 0)));
  await expect(page.getByLabel("Period")).toHaveValue("prevMonth");

  // No rolling "Last month" beside "Last 30 days" any more.
  await expect(page.getByLabel("Period").locator("option", { hasText: /^Last month$/ })).toHaveCount(0);
  await page.getByLabel("Period").selectOption({ label: "Month to date" });
  await expect(page.getByLabel("From")).toHaveValue(iso(Date.UTC(y, m, 1)));
  await expect(page.getByLabel("To", { exact: true })).toHaveValue(iso(Date.UTC(y, m, d)));
  await expect(page.getByLabel("Period")).toHaveValue("month");
  // A reload keeps the preset.
  await page.reload();
  await ready(page);
  await expect(page.getByLabel("Period")).toHaveValue("month");
});

for (const path of ["/live", "/events", "/sync"]) {
  test(`${path} filters with the analytics filter bar, applied at once`, async ({ page }) => {
    await page.goto(path);
    await ready(page);
    const bar = page.getByTestId("filter-bar");
    await expect(bar.getByTestId("app-picker")).toBeVisible();
    await expect(bar.getByLabel("Time zone")).toBeVisible();
    await expect(page.getByRole("button", { name: "Apply" })).toHaveCount(0);
    // The zone applies without a button, and the page writes its times in it.
    await bar.getByLabel("Time zone").selectOption("Asia/Tokyo");
    await expect(page).toHaveURL(/tz=Asia%2FTokyo|tz=Asia\/Tokyo/);
    await expect(bar.getByLabel("Time zone")).toHaveValue("Asia/Tokyo");
    await expect(page.locator("main")).not.toContainText("(UTC)");
    await expect(page.getByText(/\(Asia\/Tokyo\)/).first()).toBeVisible();
  });
}

test("events: the period presets of the analytics pages choose the counted days", async ({ page }) => {
  await page.goto("/events");
  await ready(page);
  await page.getByTestId("filter-bar").getByLabel("Period").selectOption({ label: "Last 7 days" });
  await expect(page).toHaveURL(/from=\d+/);
  await expect(page.getByTestId("filter-bar").getByLabel("Period")).toHaveValue("7d");
  // "Events per day, Nov 18, 2026 – Nov 24, 2026 (UTC)": seven days, in the analytics pages' date format.
  const span = async () => {
    const [, a, b] = /, (\w{3} \d{1,2}, \d{4}) – (\w{3} \d{1,2}, \d{4})/.exec(await page.locator("#events-per-day").innerText()) ?? [];
    return (Date.parse(`${b} UTC`) - Date.parse(`${a} UTC`)) / 86_400_000 + 1;
  };
  await expect.poll(span).toBe(7);
});
