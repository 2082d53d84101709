/**
 * Live and ongoing calls: a live session and each person in it lead to the call's
 * detail (with its webhook event log), and an ongoing call's duration runs instead of
 * showing its last synced value.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

test("a live session and its people link to the call detail", async ({ page }) => {
  await page.goto("/live?tz=Europe/Berlin");
  const card = page.locator('[data-testid="live-sessions"] > li').first();
  await expect(card).toBeVisible();
  const sessionId = (await card.getAttribute("data-session-id"))!;
  const person = card.locator("tr[data-occupant] a").first();
  await expect(person).toHaveAttribute("href", new RegExp(`^/calls/${encodeURIComponent(sessionId).replace(/\./g, "\\.")}\\?app=[^&]+&tz=Europe%2FBerlin#participants$`));
  await card.getByTestId("live-call-link").click();
  await expect(page).toHaveURL(new RegExp(`/calls/${encodeURIComponent(sessionId).replace(/\./g, "\\.")}\\?`));
  await expect(page.locator("main")).toContainText(sessionId);
  await expect(page.getByTestId("panel-participants")).toBeVisible();
  // Its event log: the webhooks received for it, in order, beside what the Calls API says.
  const log = page.getByTestId("panel-events");
  await expect(log.getByTestId("events-compare")).toContainText("Calls API");
  const joins = log.locator('tr[data-trigger$="_participant_joined"]');
  expect(await joins.count()).toBeGreaterThan(0);
  const times = await log.locator("tbody tr td:first-child").allInnerTexts();
  const parsed = times.map((t) => Date.parse(t.replace(" (received)", "").replace(",", "")));
  expect(parsed).toEqual([...parsed].sort((a, b) => a - b));
});

test("an ongoing call's duration runs, in the calls table and on its page", async ({ page }) => {
  await page.goto("/calls?status=ongoing");
  await ready(page);
  const running = page.locator("tbody tr[data-session]").first().getByTestId("running-duration");
  await expect(running).toContainText("running");
  const first = await running.innerText();
  // It keeps counting (the synced value would stay as it is).
  await expect.poll(async () => running.innerText(), { timeout: 5_000 }).not.toBe(first);

  await page.locator("tbody tr[data-session]").first().getByRole("link").first().click();
  await page.waitForURL(/\/calls\/[^/?]+\?app=/);
  await expect(page.getByTestId("running-duration")).toContainText("running");

  // An ended call shows its duration as it is.
  await page.goto("/calls?status=ended");
  await ready(page);
  await expect(page.locator("tbody tr[data-session]").first()).toBeVisible();
  await expect(page.getByTestId("running-duration")).toHaveCount(0);
});
