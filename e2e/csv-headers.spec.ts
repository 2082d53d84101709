/**
 * Issue 29: one naming rule across the CSVs (camelCase, like the JSON keys), and a unit in
 * the name where a number has one: the statements CSV's headers and the recordings CSV's
 * duration (docs/api.md records both renames).
 */
import { expect, test } from "@playwright/test";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

async function headerOf(page: import("@playwright/test").Page, url: string): Promise<string[]> {
  const res = await page.request.get(url);
  expect(res.status()).toBe(200);
  return (await res.text()).replace(/^\uFEFF/, "").split(/\r?\n/)[0].split(",");
}

test("the statements CSV has camelCase headers; the recordings CSV names its duration's unit", async ({ page }) => {
  const now = new Date();
  const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
  const statements = await headerOf(page, `/api/v1/statements?month=${month}&format=csv`);
  expect(statements).toEqual(expect.arrayContaining(["appName", "timeZone", "audioMinutes", "videoMinutes", "unitPrice"]));
  expect(statements.filter((h) => h.includes("_"))).toEqual([]);
  const recordings = await headerOf(page, "/api/v1/recordings?format=csv");
  expect(recordings).toContain("durationSeconds");
  expect(recordings).not.toContain("duration");
});
