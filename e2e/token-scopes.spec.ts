/**
 * Settings → API tokens: a read-only token with an expiry, made on the page, reads a
 * report and is refused a write; the page shows its scope, expiry and last use.
 */
import { expect, test } from "@playwright/test";
import { demoState, signIn } from "./fixture";

const RUN = Date.now().toString(36);

test("an admin makes a read-only token that expires, and sees its scope, expiry and last use", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/settings/tokens");
  const form = page.getByRole("form", { name: "Create an API token" });
  await form.getByLabel("For user").selectOption(state.admin.email);
  await form.getByLabel("Name").fill(`read ${RUN}`);
  await form.getByLabel("Scope").selectOption("read");
  await form.getByLabel("Expires").selectOption("30d");
  await form.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("new-token").textContent())!.trim();
  expect(token).toMatch(/^cb_/);

  const bearer = { authorization: `Bearer ${token}` };
  expect((await request.get("/api/v1/usage/apps", { headers: bearer })).status()).toBe(200);
  const write = await request.post("/api/v1/alerts", { headers: { ...bearer, "content-type": "application/json" }, data: {} });
  expect(write.status()).toBe(403);
  expect(((await write.json()) as { error: { message: string } }).error.message).toMatch(/read-only/);

  await page.reload();
  const row = page.locator("tr", { hasText: `read ${RUN}` });
  const cells = row.locator("td");
  const headers = await page.locator("thead th").allTextContents();
  const cell = (name: string) => cells.nth(headers.indexOf(name));
  await expect(cell("Scope")).toHaveText("read");
  await expect(cell("Status")).toHaveText("active");
  await expect(cell("Last used")).not.toHaveText("never");
  // About 30 days from now, shown as a date in the reader's zone.
  const expires = await cell("Expires").locator("time").getAttribute("datetime");
  const days = (Date.parse(expires!) - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(29);
  expect(days).toBeLessThanOrEqual(30);
});
