/**
 * Issue 29 #2: the time zone and the filters follow the person. A page opened without a
 * zone starts in the person's saved default, else the browser's; the header's links carry
 * the filter set, zone included, to every report page; a call's page leads back to the
 * same filtered list.
 */
import { expect, test, type Page } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

/** A write signed in by cookie must come from this server's pages (its Origin), as a browser's would. */
function putPreferences(page: Page, data: Record<string, unknown>) {
  return page.request.put("/api/v1/users/me/preferences", { data, headers: { origin: `http://localhost:${process.env.E2E_PORT ?? 3100}` } });
}

test.describe("a browser in New York", () => {
  test.use({ timezoneId: "America/New_York" });

  test("starts in the browser's zone, selected, when the URL names none", async ({ page }) => {
    // No saved default for this person (another test may have saved one).
    expect((await putPreferences(page, { timeZone: null, apps: [] })).status()).toBe(200);
    await page.goto("/calls");
    await ready(page);
    await expect(page).toHaveURL(/[?&]tz=America(%2F|\/)New_York/);
    await expect(page.getByLabel("Time zone")).toHaveValue("America/New_York");
    // The browser's zone is the start, not a filter to clear.
    await expect(page.getByRole("button", { name: "Clear filters" })).toHaveCount(0);
  });
});

test("the zone and filters chosen on Calls follow to every report page, the call and back", async ({ page }) => {
  await page.goto("/calls");
  await ready(page);
  await page.getByLabel("Time zone").selectOption("Asia/Kolkata");
  await page.getByLabel("Status").selectOption({ label: "Ended" });
  await expect(page).toHaveURL(/status=ended/);
  await expect(page).toHaveURL(/tz=Asia(%2F|\/)Kolkata/);

  const nav = page.getByRole("navigation", { name: "Main" });
  for (const [text, path] of [["Overview", "/"], ["Participants", "/participants"], ["Tenant apps", "/apps"], ["Recordings", "/recordings"], ["Calls", "/calls"]] as const) {
    await nav.getByRole("link", { name: text, exact: true }).click();
    await expect(page).toHaveURL((u) => u.pathname === path && u.searchParams.get("tz") === "Asia/Kolkata" && u.searchParams.get("status") === "ended");
    await ready(page);
    await expect(page.getByLabel("Time zone")).toHaveValue("Asia/Kolkata");
  }

  // Into one call and back: the list's filters come back with it.
  await page.getByLabel("Period").selectOption({ label: "Last 90 days" });
  await expect(page).toHaveURL(/from=\d+/);
  const listUrl = new URL(page.url());
  await page.locator("[data-session] a").first().click();
  await expect(page).toHaveURL(/\/calls\/[^?]+\?/);
  await expect(page.getByTestId("call-zone")).toHaveText("Times in Asia/Kolkata.");
  // The header from a call's page carries the list's filters too.
  await expect(nav.getByRole("link", { name: "Overview", exact: true })).toHaveAttribute("href", /status=ended/);
  await page.getByRole("link", { name: "← Back to the calls list" }).click();
  await expect(page).toHaveURL((u) => u.pathname === "/calls" && ["status", "tz", "from", "to"].every((k) => u.searchParams.get(k) === listUrl.searchParams.get(k)));
  await ready(page);
  await expect(page.getByLabel("Period")).toHaveValue("90d");
});

test("changing the zone keeps the preset, in the new zone's days", async ({ page }) => {
  await page.goto("/calls?tz=UTC");
  await ready(page);
  await page.getByLabel("Period").selectOption({ label: "Last 90 days" });
  await expect(page).toHaveURL(/from=\d+/);
  await page.getByLabel("Time zone").selectOption("Asia/Kolkata");
  await expect(page).toHaveURL(/tz=Asia(%2F|\/)Kolkata/);
  await expect(page.getByLabel("Period")).toHaveValue("90d");
});

test("a saved default zone and apps are where a page starts, and the save is audited", async ({ page }) => {
  const bad = await putPreferences(page, { timeZone: "Mars/Base" });
  expect(bad.status()).toBe(400);
  expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_parameter");

  await page.goto("/preferences");
  await page.getByLabel("Start in").selectOption("zone");
  await page.getByLabel("Time zone").selectOption("Asia/Tokyo");
  await page.getByTestId("app-picker").locator("summary").click();
  await page.getByRole("checkbox").first().check();
  await page.getByRole("button", { name: "Save defaults" }).click();
  await expect(page.getByRole("status")).toContainText("Saved");
  const saved = (await (await page.request.get("/api/v1/users/me/preferences")).json()) as { data: { timeZone: string; apps: string[] } };
  expect(saved.data.timeZone).toBe("Asia/Tokyo");
  expect(saved.data.apps).toHaveLength(1);

  await page.goto("/participants");
  await ready(page);
  await expect(page).toHaveURL((u) => u.searchParams.get("tz") === "Asia/Tokyo" && u.searchParams.getAll("app").join() === saved.data.apps.join());
  await expect(page.getByLabel("Time zone")).toHaveValue("Asia/Tokyo");

  await page.goto("/settings/audit");
  await expect(page.getByText("preferences.update").first()).toBeVisible();
  // Leave no default behind for the other specs.
  expect((await putPreferences(page, { timeZone: null, apps: [] })).status()).toBe(200);
});
