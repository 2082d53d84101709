/**
 * Issue 29 #7, the heatmap: a cell (weekday × hour, by click or keyboard) opens the Calls
 * page on the calls running in that hour of that weekday over the period — exactly as
 * many as the cell counts — with the filter in the URL and a chip that removes it.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { numberIn, ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

/** The busiest cell whose calls fit on one page of the list (50 rows), and its count. */
async function cellToOpen(page: Page, skip = new Set<string>()): Promise<{ link: Locator; calls: number; name: string }> {
  const links = page.locator("a.heatmap-cell-link");
  await expect(links).toHaveCount(7 * 24);
  const counts = await links.evaluateAll((as) => as.map((a) => [Number(a.getAttribute("data-calls")), a.getAttribute("aria-label") ?? ""] as const));
  const fit = counts.map(([calls, name], i) => ({ i, calls, name })).filter((c) => c.calls >= 1 && c.calls <= 50 && !skip.has(c.name));
  expect(fit.length, "cells with 1 to 50 calls").toBeGreaterThan(0);
  const best = fit.reduce((a, b) => (b.calls > a.calls ? b : a));
  return { link: links.nth(best.i), calls: best.calls, name: best.name };
}

async function expectCallsListed(page: Page, calls: number): Promise<void> {
  await expect(page).toHaveURL((u) => u.pathname === "/calls" && u.searchParams.has("weekday") && u.searchParams.has("hour") && u.searchParams.get("tz") === "Asia/Kathmandu");
  await ready(page);
  await expect(page.locator(".is-stale")).toHaveCount(0);
  await expect.poll(() => numberIn(page, "total-calls")).toBe(calls);
  await expect(page.locator("table.data-table tbody tr[data-session]")).toHaveCount(calls);
}

test("a heatmap cell opens the Calls page on exactly the calls it counts (click and keyboard), in a +05:45 zone, and the chip removes the filter", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto("/?tz=Asia/Kathmandu");
  await ready(page);
  await page.getByLabel("Period").selectOption({ label: "Last 30 days" });
  await expect(page).toHaveURL(/from=\d+/);
  const period = new URL(page.url()).searchParams;

  // Keyboard: focus the cell's link and press Enter; its name says weekday, hour and count.
  const first = await cellToOpen(page);
  expect(first.name).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d:00: \d+ calls? running \(.+ on average\) — list them$/);
  await first.link.focus();
  await expect(first.link).toBeFocused();
  await page.keyboard.press("Enter");
  await expectCallsListed(page, first.calls);
  // The period and zone came along.
  await expect(page).toHaveURL((u) => u.searchParams.get("from") === period.get("from") && u.searchParams.get("to") === period.get("to"));
  const weekday = Number(new URL(page.url()).searchParams.get("weekday"));
  const hour = Number(new URL(page.url()).searchParams.get("hour"));
  expect(first.name.startsWith(`${["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][weekday]} ${String(hour).padStart(2, "0")}:00`)).toBe(true);

  // The filter survives a reload, and its chip removes it: more calls again.
  await page.reload();
  await expectCallsListed(page, first.calls);
  const chip = page.getByTestId("running-hours-filter").getByRole("button", { name: /^Remove filter: Calls running (Sundays|Mondays|Tuesdays|Wednesdays|Thursdays|Fridays|Saturdays) \d\d:00–\d\d:00 \(Asia\/Kathmandu\)$/ });
  await expect(chip).toBeVisible();
  await chip.click();
  await expect(page).toHaveURL((u) => !u.searchParams.has("weekday") && !u.searchParams.has("hour") && u.searchParams.get("from") === period.get("from"));
  await expect(page.getByTestId("running-hours-filter")).toHaveCount(0);
  await expect(page.locator(".is-stale")).toHaveCount(0);
  await expect.poll(() => numberIn(page, "total-calls")).toBeGreaterThan(first.calls);

  // A click on another cell.
  await page.goBack();
  await page.goBack();
  await expect(page).toHaveURL((u) => u.pathname === "/");
  await ready(page);
  const second = await cellToOpen(page, new Set([first.name]));
  await second.link.click();
  await expectCallsListed(page, second.calls);
});

test("the API refuses a weekday or hour out of range with a clear 400", async ({ page }) => {
  for (const [q, parameter] of [["weekday=7", "weekday"], ["hour=24", "hour"], ["hour=ten", "hour"]]) {
    const res = await page.request.get(`/api/v1/calls?${q}`);
    expect(res.status(), q).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_parameter");
    expect(body.error.message).toContain(parameter);
  }
});
