/**
 * Settings: the index, tenant apps and their webhooks (ingest URL to copy, write-only
 * secrets, edit / add / remove audited), "Create on the platform", and 404 for viewers.
 */
import { expect, test } from "@playwright/test";
import { demoState, signIn } from "./fixture";

const RUN = Date.now().toString(36);

test("the settings index links every settings page", async ({ page }) => {
  await signIn(page, demoState().admin);
  await page.goto("/settings");
  const nav = page.getByRole("navigation", { name: "Settings" });
  for (const [name, href] of [["Tenant apps", "/settings/apps"], ["Users", "/settings/users"], ["API tokens", "/settings/tokens"], ["Audit log", "/settings/audit"]]) {
    await expect(nav.getByRole("link", { name: new RegExp(name) })).toHaveAttribute("href", href);
  }
  await nav.getByRole("link", { name: /Tenant apps/ }).click();
  await expect(page).toHaveURL(/\/settings\/apps$/);
});

test("tenant apps show the ingest URL and never a secret", async ({ page, context }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/settings/apps");
  for (const app of state.emulator.apps) {
    const card = page.locator(`section[data-app="${app.appId}"]`);
    await expect(card.getByTestId("ingest-url")).toHaveText(`${new URL(page.url()).origin}/api/webhooks/${app.appId}`);
    await expect(card.getByTestId("api-key")).toHaveText(/^….{4}$/);
    await expect(card.getByTestId("basic-auth")).toHaveText("on, user platform");
  }
  const html = await page.content();
  for (const secret of state.knownSecrets) expect(html).not.toContain(secret);
  // Copy puts the URL on the clipboard.
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const first = page.locator(`section[data-app="${state.emulator.apps[0].appId}"]`);
  await first.getByRole("button", { name: "Copy" }).click();
  await expect(first.getByText("Copied.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await first.getByTestId("ingest-url").innerText());
});

test("add, edit and remove an app; every change audited; webhook names are limited to 50", async ({ page }) => {
  const state = demoState();
  const appId = `e2e-${RUN}`;
  await signIn(page, state.admin);
  await page.goto("/settings/apps");
  const add = page.getByRole("form", { name: "Add a tenant app" });
  await add.getByLabel("App id").fill(appId);
  await add.getByLabel("Name", { exact: true }).fill("E2E app");
  await add.getByLabel("Region").selectOption("eu");
  await add.getByLabel("API key").fill(`key-${RUN}-abcd`);
  await add.getByLabel("Webhook id").fill("wh-e2e");
  await add.getByLabel("Username").fill("platform");
  await add.getByLabel("Password").fill(`pw-${RUN}`);
  await add.getByRole("button", { name: "Add app" }).click();
  await expect(add.getByRole("status")).toContainText(`Added E2E app (${appId})`);
  const card = page.locator(`section[data-app="${appId}"]`);
  await expect(card.getByTestId("api-key")).toHaveText("…abcd");
  expect(await page.content()).not.toContain(`pw-${RUN}`);

  // Edit: a too long webhook name is refused with the rule, and what was typed stays.
  await card.getByText(`Edit ${appId}`).click();
  const edit = card.getByRole("form", { name: `Edit ${appId}` });
  await edit.getByLabel("Webhook name").fill("x".repeat(51));
  await edit.getByLabel("Webhook name").evaluate((el: HTMLInputElement) => el.removeAttribute("maxlength"));
  await edit.getByLabel("Webhook name").fill("x".repeat(51));
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit.getByRole("alert")).toContainText("at most 50 characters");
  await edit.getByLabel("Webhook name").fill("Callboard e2e");
  await edit.getByLabel("Require HTTP Basic auth").uncheck();
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit.getByRole("status")).toContainText("Saved");
  await expect(card.getByTestId("basic-auth")).toHaveText("off");

  await card.getByText(`Remove ${appId}`).click();
  const remove = card.getByRole("form", { name: `Remove ${appId}` });
  await remove.getByLabel(`Type ${appId} to confirm`).fill("wrong");
  await remove.getByRole("button", { name: "Remove app" }).click();
  await expect(remove.getByRole("alert")).toContainText("to confirm");
  await remove.getByLabel(`Type ${appId} to confirm`).fill(appId);
  await remove.getByRole("button", { name: "Remove app" }).click();
  await expect(page.locator(`section[data-app="${appId}"]`)).toHaveCount(0);

  await page.goto("/settings/audit");
  const log = await page.locator("tbody").innerText();
  for (const action of ["app.create", "app.update", "app.remove"]) expect(log).toContain(action);
  expect(log).not.toContain(`pw-${RUN}`);
  expect(log).not.toContain(`key-${RUN}`);
});

test("Create on the platform says how to configure multi-tenancy, and waits disabled, when it is not configured", async ({ page }) => {
  await signIn(page, demoState().admin);
  await page.goto("/settings/apps");
  const form = page.getByRole("form", { name: "Create an app on the platform" });
  // A hint, not an error: nothing went wrong.
  await expect(form.getByTestId("tenant-setup")).toContainText("PLATFORM_MANAGEMENT_URL");
  await expect(form.getByRole("alert")).toHaveCount(0);
  await expect(form.locator(".alert")).toHaveCount(0);
  await expect(form.getByLabel("Name")).toBeDisabled();
  await expect(form.getByRole("button", { name: "Create on the platform" })).toBeDisabled();
});

test("viewers get 404 on every settings page and see no Settings link", async ({ page }) => {
  await signIn(page, demoState().viewer);
  for (const path of ["/settings", "/settings/apps", "/settings/users", "/settings/tokens", "/settings/audit"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
  }
  await expect(page.getByRole("link", { name: "Settings" })).toHaveCount(0);
});

test.describe("in a browser in Kolkata", () => {
  test.use({ timezoneId: "Asia/Kolkata" });

  test("settings show times in the reader's own zone, named, with the instant and UTC kept", async ({ page }) => {
    const state = demoState();
    await signIn(page, state.admin);
    await page.goto("/settings/apps");
    const lastSync = page.locator(`section[data-app="${state.emulator.apps[0].appId}"] time`);
    const iso = await lastSync.getAttribute("datetime");
    expect(iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const inKolkata = new Intl.DateTimeFormat("en", { timeZone: "Asia/Kolkata", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" });
    await expect(lastSync).toHaveText(inKolkata.format(new Date(iso!)));
    await expect(lastSync).toContainText("GMT+5:30");
    await expect(lastSync).toHaveAttribute("title", / UTC$/);
  });
});
