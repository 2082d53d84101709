/**
 * Issue 29 #4: Participants' per-person counts are named for what they count (the
 * person's own part in a call) and explained where they are shown, since they differ from
 * the Calls page's Status (the call's outcome); and the two pages link to each other with
 * the same filters.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

test("the per-person columns say whose answer they count, and why they differ from Calls", async ({ page }) => {
  await page.goto("/participants?tz=UTC&type=video");
  await ready(page);
  const table = page.getByRole("table", { name: "Participants" });
  await expect(table.getByRole("columnheader", { name: "Joined by them" })).toBeVisible();
  await expect(table.getByRole("columnheader", { name: "Not answered by them" })).toBeVisible();
  await expect(table.getByRole("columnheader", { name: /^Unanswered$/ })).toHaveCount(0);
  await expect(page.getByTestId("participant-counts-explained")).toContainText("outcome of the call as a whole");

  // Participants → Calls with the same filters, and back.
  await page.getByRole("link", { name: "The calls of these filters" }).click();
  await expect(page).toHaveURL((u) => u.pathname === "/calls" && u.searchParams.get("type") === "video" && u.searchParams.get("tz") === "UTC");
  await ready(page);
  await page.getByRole("link", { name: "Participants of these calls" }).click();
  await expect(page).toHaveURL((u) => u.pathname === "/participants" && u.searchParams.get("type") === "video");
});
