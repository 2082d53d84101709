import { expect, test, type Page } from "@playwright/test";
import { mkdirSync } from "node:fs";
import path from "node:path";

/** Full-page screenshot kept as a test artifact (and under test-results/screens). */
export async function snap(page: Page, name: string): Promise<void> {
  const dir = path.join("test-results", "screens");
  mkdirSync(dir, { recursive: true });
  const body = await page.screenshot({ fullPage: true, path: path.join(dir, `${name}.png`) });
  await test.info().attach(name, { body, contentType: "image/png" });
}

/** The number in a KPI or total (digits only). */
export async function numberIn(page: Page, testId: string): Promise<number> {
  const text = await page.getByTestId(testId).first().innerText();
  return Number(text.replace(/[^0-9]/g, ""));
}

/** Waits until the hydrated client is ready (filters respond). */
export async function ready(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await expect(page.getByTestId("filter-bar")).toBeVisible();
}
