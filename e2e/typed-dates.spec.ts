/**
 * Issue 29 #1: typing a date into From / To (Calls, Participants). Chromium reports every
 * keystroke of the year ("0002", "0020", "0202", "2026"): none of those may reach the API
 * (they were -62k-year epochs and 400s), the whole date applies, a date the API cannot take
 * is refused in the field with the reason, and a refused request never leaves stale rows on
 * screen as if they answered the filters.
 */
import { expect, test, type Page } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

/** Every analytics answer that was not a success, while the page is used. */
function refusals(page: Page): string[] {
  const bad: string[] = [];
  page.on("response", (r) => {
    if (r.url().includes("/api/v1/") && r.status() >= 400) bad.push(`${r.status()} ${r.url()}`);
  });
  return bad;
}

for (const path of ["/calls", "/participants"]) {
  test(`${path}: a typed date applies whole, with no request for the half-typed year`, async ({ page }) => {
    const bad = refusals(page);
    await page.goto(path);
    await ready(page);
    const from = page.getByLabel("From");
    await from.click();
    // Month, day, year as a person types them into Chromium's date field.
    await page.keyboard.type("11162026");
    await expect(page).toHaveURL(new RegExp(`[?&]from=${Date.UTC(2026, 10, 16) / 1000}(&|$)`));
    await from.press("Tab");
    await expect(from).toHaveValue("2026-11-16");
    await expect(page.getByTestId("from-error")).toHaveCount(0);
    await page.waitForLoadState("networkidle");
    expect(bad).toEqual([]);
  });

  test(`${path}: a date before 1970 is refused in the field and nothing is asked`, async ({ page }) => {
    const bad = refusals(page);
    await page.goto(path);
    await ready(page);
    const before = page.url();
    const from = page.getByLabel("From");
    await from.click();
    await page.keyboard.type("11161906");
    // Leaving the field says why (Tab first reaches the field's own calendar button, so click away).
    await page.getByRole("heading", { level: 1 }).click();
    await expect(page.getByTestId("from-error")).toContainText("1970");
    await expect(from).toHaveAttribute("aria-invalid", "true");
    expect(page.url()).toBe(before);
    // Mended, the date applies and the reason goes.
    await from.fill("2026-11-16");
    await expect(page).toHaveURL(new RegExp(`[?&]from=${Date.UTC(2026, 10, 16) / 1000}(&|$)`));
    await expect(page.getByTestId("from-error")).toHaveCount(0);
    await page.waitForLoadState("networkidle");
    expect(bad).toEqual([]);
  });
}

test("a refused request shows the server's reason instead of the previous rows", async ({ page }) => {
  await page.goto("/calls");
  await ready(page);
  await expect(page.locator("[data-session]").first()).toBeVisible();
  // The next list request is refused as the API refuses a bad filter.
  await page.route("**/api/v1/calls?**", (route) =>
    route.fulfill({ status: 400, contentType: "application/json", body: JSON.stringify({ error: { code: "invalid_parameter", message: "from: must be between 0 and 253402300799" } }) }),
  );
  await page.getByLabel("Status").selectOption({ label: "Ended" });
  const calls = page.getByTestId("panel-calls");
  await expect(calls.getByRole("alert")).toContainText("from: must be between 0 and 253402300799", { timeout: 5000 });
  await expect(calls.locator("[data-session]")).toHaveCount(0);
});
