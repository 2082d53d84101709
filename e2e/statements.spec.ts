/**
 * Usage statements in a real browser: prices set on Settings → Price sheets, the month's
 * statements priced on /statements, one issued (frozen, numbered, audited), then printed:
 * the print layout (no navigation or controls, one statement per page) and a real PDF.
 * Viewers see their app's statement only and cannot issue.
 */
import { expect, test, type Page } from "@playwright/test";
import { demoState } from "./fixture";
import { snap } from "./dashboard-helpers";
import { ADMIN_STATE, VIEWER_STATE } from "./storage";

/** The last whole month in UTC (the page's default). */
function lastMonth(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return d.toISOString().slice(0, 7);
}

interface Json { data: Array<{ app: string; status: string; total: string | null; currency: string | null; issued: { number: string } | null }> }

async function statementsOf(page: Page, query: string): Promise<Json> {
  const res = await page.request.get(`/api/v1/statements?${query}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as Json;
}

test.describe("as admin", () => {
  test.use({ storageState: ADMIN_STATE });

  test("set prices, issue a month's statement, and print it", async ({ page }) => {
    const state = demoState();
    const app = state.emulator.apps[0].appId;
    // Prices: an account default from long ago (kept if a retry finds it set).
    await page.goto("/settings/prices");
    if ((await page.locator('tr[data-sheet="default:2020-01"]').count()) === 0) {
      const form = page.getByRole("form", { name: "Set prices" });
      await form.getByLabel("From month").fill("2020-01");
      await form.getByLabel("Currency").fill("EUR");
      await form.getByLabel("Per audio participant-minute").fill("0.004");
      await form.getByLabel("Per video participant-minute").fill("0.0125");
      await form.getByLabel("Per recording").fill("0.05");
      await form.getByLabel("Monthly minimum").fill("1.00");
      await form.getByRole("button", { name: "Set prices" }).click();
      await expect(form.getByRole("status")).toContainText("Prices of the account default set from 2020-01");
      // Bad input is refused with the field named, what was typed stays, and nothing is stored.
      await form.getByLabel("From month").fill("2021-01");
      await form.getByLabel("Currency").fill("XQZ");
      await form.getByLabel("Per audio participant-minute").fill("0.004");
      await form.getByLabel("Per video participant-minute").fill("0.01");
      await form.getByLabel("Per recording").fill("0");
      await form.getByRole("button", { name: "Set prices" }).click();
      await expect(form.getByRole("alert")).toContainText("currency");
      await expect(form.getByLabel("Per audio participant-minute")).toHaveValue("0.004");
      await expect(page.locator('tr[data-sheet="default:2021-01"]')).toHaveCount(0);
    }
    await expect(page.locator('tr[data-sheet="default:2020-01"]')).toContainText("EUR");

    // The month: the last whole one, or the one before if a retry already issued it.
    let month = lastMonth();
    const first = await statementsOf(page, `month=${month}&app=${app}`);
    if (first.data[0].status === "issued") month = lastMonth(new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5)) - 1, 15)));

    await page.goto(`/statements?month=${month}`);
    await expect(page.getByRole("heading", { level: 1, name: "Usage statements" })).toBeVisible();
    await page.waitForLoadState("networkidle");
    const cards = page.locator("article.statement");
    await expect(cards).toHaveCount(state.emulator.apps.length);
    const card = page.locator(`article.statement[data-app="${app}"]`);
    await expect(card.getByTestId("statement-status")).toContainText("Draft");
    const draft = (await statementsOf(page, `month=${month}&app=${app}`)).data[0];
    expect(draft.currency).toBe("EUR");
    await expect(card.getByTestId("statement-total")).toHaveText(`EUR ${draft.total}`);
    await snap(page, "statements-draft");

    await card.getByRole("button", { name: "Issue statement" }).click();
    await expect(card.getByTestId("statement-number")).toHaveText(/^ST-\d{6}$/);
    const number = await card.getByTestId("statement-number").innerText();
    const issued = (await statementsOf(page, `month=${month}&app=${app}`)).data[0];
    expect(issued).toMatchObject({ status: "issued", total: draft.total, issued: { number } });
    await expect(card.getByRole("button", { name: "Issue statement" })).toHaveCount(0);
    // Issuing is in the audit log.
    await page.goto("/settings/audit");
    await expect(page.locator("tr", { hasText: "statement.issue" }).first()).toContainText(`${app} ${month}`);

    // Print: navigation and controls gone, one statement per page, and a real PDF.
    await page.goto(`/statements?month=${month}`);
    await page.waitForLoadState("networkidle");
    await page.emulateMedia({ media: "print", colorScheme: "dark" });
    await expect(page.locator(".app-header")).toBeHidden();
    await expect(page.getByRole("form", { name: "Statement filters" })).toBeHidden();
    await expect(page.getByRole("heading", { level: 1 })).toBeHidden();
    await expect(card).toBeVisible();
    await expect(card.getByTestId("statement-number")).toHaveText(number);
    const printed = await cards.evaluateAll((els) => els.map((e) => ({ after: getComputedStyle(e).breakAfter, background: getComputedStyle(document.body).backgroundColor, color: getComputedStyle(e).color })));
    expect(printed.slice(0, -1).every((p) => p.after === "page")).toBe(true);
    // White paper and black text even when the screen is dark.
    expect(printed[0].background).toBe("rgb(255, 255, 255)");
    expect(printed[0].color).toBe("rgb(0, 0, 0)");
    await snap(page, "statements-print");
    // Kept in the test's output folder, to look at.
    const pdf = await page.pdf({ format: "A4", printBackground: true, path: test.info().outputPath("statements.pdf") });
    const text = pdf.toString("latin1");
    expect(text.startsWith("%PDF-")).toBe(true);
    // One page per statement at least (a long one may run over).
    expect(text.match(/\/Type\s*\/Page\b/g)?.length ?? 0).toBeGreaterThanOrEqual(state.emulator.apps.length);
  });
});

test.describe("as viewer", () => {
  test.use({ storageState: VIEWER_STATE });

  test("sees the statements of their apps only, and cannot issue", async ({ page }) => {
    const state = demoState();
    // On a phone, in dark mode: nothing wider than the screen but the scrolling tables.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`/statements?month=${lastMonth()}&detail=true`);
    await page.waitForLoadState("networkidle");
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(1);
    await snap(page, "statements-viewer-390-dark");
    const cards = page.locator("article.statement");
    await expect(cards).toHaveCount(state.viewer.apps.length);
    await expect(cards.first()).toHaveAttribute("data-app", state.viewer.apps[0]);
    await expect(page.getByRole("button", { name: "Issue statement" })).toHaveCount(0);
    const other = state.emulator.apps.map((a) => a.appId).find((a) => !state.viewer.apps.includes(a))!;
    expect((await page.request.get(`/api/v1/statements?month=${lastMonth()}&app=${other}`)).status()).toBe(404);
    const issue = await page.request.post("/api/v1/statements", { headers: { origin: new URL(page.url()).origin }, data: { month: lastMonth(), app: state.viewer.apps[0] } });
    expect(issue.status()).toBe(403);
    await page.goto("/settings/prices");
    await expect(page.getByRole("heading", { name: "Price sheets" })).toHaveCount(0);
  });
});
