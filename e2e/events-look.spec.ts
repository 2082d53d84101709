/**
 * Issue 29 §6: the Events page looks like the other report pages: days in the person's
 * zone as the dashboard writes them, the CSV links of the report panels, and the pager
 * with First and Last.
 */
import { expect, test } from "@playwright/test";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

test("days in the zone, CSV links and the First/Previous/Next/Last pager", async ({ page }) => {
  await page.goto("/events?tz=Asia%2FKolkata");
  const table = page.getByTestId("events-counts");
  await expect(table.locator("thead")).toContainText("Day (Asia/Kolkata)");
  const first = table.locator("tbody td[data-day]").first();
  // "Nov 27, 2026", not "2026-11-27"; the ISO day stays on the cell for scripts.
  await expect(first).toHaveText(/^[A-Z][a-z]{2} \d{1,2}, \d{4}$/);
  await expect(first).toHaveAttribute("data-day", /^\d{4}-\d{2}-\d{2}$/);

  for (const id of ["events-csv", "deliveries-csv"]) {
    const link = page.getByTestId(id);
    await expect(link).toHaveClass(/csv-link/);
    await expect(link).toHaveAttribute("download", "");
    await expect(link).toHaveAttribute("aria-label", /^Download CSV of /);
  }

  const pager = page.getByRole("navigation", { name: "Pages of the per-day table" });
  await expect(pager.getByTestId("page-status")).toContainText(/Page 1 of (\d+)/);
  const pages = Number(/of ([\d,]+)/.exec((await pager.getByTestId("page-status").innerText()) ?? "")![1]!.replace(/,/g, ""));
  expect(pages, "the demo's events fill more than one page").toBeGreaterThan(1);
  await expect(pager.getByText("First", { exact: true })).toHaveAttribute("aria-disabled", "true");
  await pager.getByRole("link", { name: "Last", exact: true }).click();
  await expect(page).toHaveURL((u) => u.searchParams.get("page") === String(pages) && u.searchParams.get("tz") === "Asia/Kolkata");
  await expect(pager.getByTestId("page-status")).toContainText(`Page ${pages} of ${pages}`);
  await expect(pager.getByText("Last", { exact: true })).toHaveAttribute("aria-disabled", "true");
  await pager.getByRole("link", { name: "First", exact: true }).click();
  await expect(page).toHaveURL((u) => u.searchParams.get("page") === null);
});
