/**
 * Issue 29 #3: month to date compares fairly. It runs from the 1st through today (the days
 * still to come are not counted or drawn), is compared with the same days of the previous
 * month, can be compared with the same period last year instead, and the compared period
 * is drawn on the daily charts as a second line.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

const day = (t: number) => new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "short", day: "numeric", year: "numeric" }).format(new Date(t));

test("month to date: the same days of the previous month, or of last year, drawn as a second line", async ({ page }) => {
  await page.goto("/?tz=UTC");
  await ready(page);
  const now = new Date();
  const y = now.getUTCFullYear(), m = now.getUTCMonth(), d = now.getUTCDate();
  const daily = page.waitForRequest((r) => r.url().includes("/api/v1/usage/daily") && r.url().includes(`from=${Date.UTC(y, m, 1) / 1000}`));
  await page.getByLabel("Period").selectOption({ label: "Month to date" });
  // Nothing after today is asked for (so nothing after today is drawn).
  expect(new URL((await daily).url()).searchParams.get("to")).toBe(String(Date.UTC(y, m, d + 1) / 1000));

  // Compared with the 1st through the same day of the previous month (clamped to its end).
  const prevMonthDays = new Date(Date.UTC(y, m, 0)).getUTCDate();
  await expect(page.getByTestId("compared-range")).toHaveText(`${day(Date.UTC(y, m - 1, 1))} – ${day(Date.UTC(y, m - 1, Math.min(d, prevMonthDays)))}`);
  const calls = page.getByTestId("chart-calls-per-day");
  await expect(calls.locator(".recharts-line")).toHaveCount(1);
  await expect(calls.getByText("previous period")).toBeVisible();
  await expect(page.getByTestId("chart-minutes-per-day").locator(".recharts-line")).toHaveCount(3);

  await page.getByLabel("Compare with").selectOption({ label: "The same period last year" });
  await expect(page).toHaveURL(/compare=year/);
  await expect(page.getByTestId("compared-range")).toHaveText(`${day(Date.UTC(y - 1, m, 1))} – ${day(Date.UTC(y - 1, m, d))}`);
  await expect(page.getByTestId("kpi-calls").locator(".sr-only")).toContainText("against the same period last year");
  await expect(calls.getByText("last year")).toBeVisible();
});

test("the API compares month to date with the same days of the previous month", async ({ page }) => {
  const request = page.request;
  const res = await request.get(`/api/v1/insights/totals?from=${Date.UTC(2026, 10, 1) / 1000}&to=${Date.UTC(2026, 10, 28) / 1000}`);
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { previousRange: { from: number; to: number }; previous: { calls: number } };
  expect(body.previousRange).toEqual({ from: Date.UTC(2026, 9, 1) / 1000, to: Date.UTC(2026, 9, 28) / 1000 });
  // The previous figures are those of that range asked for directly.
  const direct = (await (await request.get(`/api/v1/insights/totals?from=${body.previousRange.from}&to=${body.previousRange.to}`)).json()) as { current: { calls: number } };
  expect(body.previous.calls).toBe(direct.current.calls);
  const year = (await (await request.get(`/api/v1/insights/totals?from=${Date.UTC(2026, 10, 1) / 1000}&to=${Date.UTC(2026, 10, 28) / 1000}&compare=year`)).json()) as { previousRange: { from: number; to: number } };
  expect(year.previousRange).toEqual({ from: Date.UTC(2025, 10, 1) / 1000, to: Date.UTC(2025, 10, 28) / 1000 });
  const refused = await request.get(`/api/v1/insights/totals?compare=decade`);
  expect(refused.status()).toBe(400);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_parameter");
});
