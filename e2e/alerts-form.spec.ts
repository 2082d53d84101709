/**
 * Issue 29 §6, the Alerts form: filters named as the filter bar names them, "at least 1
 * call", the signing secret in its own panel with Copy that stays until dismissed, and
 * "Evaluate now" saying why there was nothing to evaluate.
 */
import { expect, test } from "@playwright/test";
import { startReceiver, type Receiver } from "@/lib/alerts/test-receiver";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

let receiver: Receiver;
test.beforeAll(async () => {
  receiver = await startReceiver();
});
test.afterAll(async () => {
  await receiver.close();
});

test("the form speaks the dashboard's words and keeps the secret on screen until dismissed", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const name = `Recorded meetings ${Date.now()}`;
  await page.goto("/alerts");
  const form = page.getByRole("form", { name: "New alert rule" });
  await form.getByLabel("Metric").selectOption("calls");
  // The choices are labels, not the API's codes.
  await expect(form.getByLabel("Mode").locator("option")).toHaveText(["Any", "Call", "Meeting", "Presenter"]);
  await expect(form.getByLabel("Recording").locator("option")).toHaveText(["Any", "Recorded", "Not recorded"]);

  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Window").selectOption("86400");
  await form.getByLabel("Condition").selectOption("above");
  await form.getByLabel("Value (calls)").fill("1000000");
  await form.getByLabel("Minimum calls").fill("1");
  await form.getByLabel("Mode").selectOption({ label: "Meeting" });
  await form.getByLabel("Recording").selectOption({ label: "Recorded" });
  await form.getByLabel("Destination URL").fill(receiver.url);
  await form.getByRole("checkbox", { name: /Allow a loopback or private address/ }).check();
  await form.getByTestId("create-rule").click();

  const panel = page.getByTestId("alert-secret-panel");
  await expect(panel).toBeVisible();
  await expect(panel.getByRole("heading", { name: `Signing secret of “${name}”` })).toBeFocused();
  const secret = (await panel.getByTestId("alert-secret").textContent()) ?? "";
  expect(secret).toMatch(/^whsec_/);
  // The form has reset for the next rule; the secret has not gone with it.
  await expect(form.getByLabel("Name")).toHaveValue("");
  await panel.getByRole("button", { name: "Copy" }).click();
  await expect(panel.getByTestId("copy-status")).toHaveText("Copied.");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

  const row = page.locator('[data-testid="alert-rules"] tr[data-rule-id]', { hasText: name });
  await expect(row).toContainText("at least 1 call");
  await expect(row).not.toContainText("1 calls");
  await expect(row).toContainText("Mode: Meeting; Recording: Recorded");

  // Another save (a rule without a destination) leaves the secret where it was.
  await form.getByLabel("Name").fill(`${name} (no destination)`);
  await form.getByTestId("create-rule").click();
  await expect(page.locator('[data-testid="alert-rules"] tr[data-rule-id]', { hasText: `${name} (no destination)` })).toBeVisible();
  await expect(panel.getByTestId("alert-secret")).toHaveText(secret);
  await panel.getByRole("button", { name: "I have stored it" }).click();
  await expect(panel).toHaveCount(0);
});

test("Evaluate now, with nothing left to evaluate, says when each window was evaluated and when the next is due", async ({ page }) => {
  const name = `Evaluated ${Date.now()}`;
  await page.goto("/alerts");
  const form = page.getByRole("form", { name: "New alert rule" });
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Metric").selectOption("calls");
  await form.getByLabel("Window").selectOption("86400");
  await form.getByLabel("Value (calls)").fill("1000000");
  await form.getByLabel("Minimum calls").fill("0");
  await form.getByTestId("create-rule").click();
  const row = page.locator('[data-testid="alert-rules"] tr[data-rule-id]', { hasText: name });
  await expect(row).toBeVisible();
  const ruleId = await row.getAttribute("data-rule-id");

  // The first round (or the server's schedule) evaluates yesterday; the second finds nothing.
  await page.getByTestId("evaluate-now").click();
  await expect(page.getByTestId("evaluate-result")).toBeVisible();
  await expect(row).not.toContainText("not evaluated yet");
  await page.getByTestId("evaluate-now").click();
  const result = page.getByTestId("evaluate-result");
  await expect(result).toContainText("Nothing to evaluate");
  const mine = result.locator(`[data-testid="evaluate-upcoming"] li[data-rule-id="${ruleId}"]`);
  // A day's window: it ended at today's midnight (UTC), and the next closes at tomorrow's.
  const midnight = new Date();
  midnight.setUTCHours(0, 0, 0, 0);
  const day = (d: Date) => d.toLocaleDateString("en-US", { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });
  await expect(mine).toContainText(`the window ending ${day(midnight)}, 00:00 UTC was evaluated at`);
  await expect(mine).toContainText(`the next window closes at ${day(new Date(midnight.getTime() + 86_400_000))}, 00:00 UTC and is evaluated from`);
  // The window itself reads whole: both dates, no "00:00 – 00:00:00".
  const yesterday = new Date(midnight.getTime() - 86_400_000);
  await expect(row).toContainText(`${day(yesterday)}, 00:00 – ${day(midnight)}, 00:00 UTC`);
});
