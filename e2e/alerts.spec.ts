/**
 * Alerts: an admin creates a rule on /alerts, evaluates it now, sees it fire (state,
 * history, header badge) and its webhook arrive, signed, at a receiver on this machine
 * (allowed per destination). Viewers see only their apps' rules and change nothing.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver } from "@/lib/alerts/test-receiver";
import { demoState, signIn } from "./fixture";
import { cookieHeader } from "./ops-helpers";

let receiver: Receiver;
test.beforeAll(async () => {
  receiver = await startReceiver();
});
test.afterAll(async () => {
  await receiver.close();
});

test("an admin creates a rule, evaluates it now and sees it fire", async ({ page }) => {
  const state = demoState();
  const name = `Calls watch ${Date.now()}`;
  await signIn(page, state.admin);
  await page.goto("/alerts");
  await expect(page.getByRole("heading", { level: 1, name: "Alerts" })).toBeVisible();

  // Below 1,000,000 calls a day: yesterday's (UTC) window breaches it whatever the demo's data.
  const form = page.getByRole("form", { name: "New alert rule" });
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Metric").selectOption("calls");
  await form.getByLabel("Window").selectOption("86400");
  await form.getByLabel("Condition").selectOption("below");
  await form.getByLabel("Value (calls)").fill("1000000");
  await form.getByLabel("Minimum calls").fill("0");
  await form.getByRole("checkbox", { name: /Acme Sales/ }).check();
  await form.getByLabel("Destination URL").fill(receiver.url);
  await form.getByRole("checkbox", { name: /Allow a loopback or private address/ }).check();
  await form.getByTestId("create-rule").click();
  const secret = (await page.getByTestId("alert-secret").textContent()) ?? "";
  expect(secret).toMatch(/^whsec_/);

  const row = page.locator('[data-testid="alert-rules"] tr[data-rule-id]', { hasText: name });
  await expect(row).toBeVisible();
  await expect(row).toContainText("Calls below 1,000,000 calls over 1 day");
  await expect(row).toContainText("Apps: acme-sales");

  // The server's own schedule may get there first; either way the rule fires once.
  await page.getByTestId("evaluate-now").click();
  await expect(page.getByTestId("evaluate-result")).toBeVisible();
  await expect(row).toHaveAttribute("data-state", "firing");
  const ruleId = await row.getAttribute("data-rule-id");
  const event = page.locator(`[data-testid="alert-history"] tr[data-rule-id="${ruleId}"]`);
  await expect(event).toHaveCount(1);
  await expect(event).toContainText("ok");
  await expect(event).toContainText("firing");

  // The notification, signed with the secret shown once.
  await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThan(0);
  const got = receiver.received.find((r) => String(r.headers["webhook-id"]).startsWith(`evt_${ruleId}_`))!;
  const body = new Webhook(secret).verify(got.body, {
    "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]),
  }) as { type: string; rule: { name: string }; threshold: number; link: string; text: string };
  expect(body).toMatchObject({ type: "alert.firing", rule: { name }, threshold: 1_000_000 });
  expect(body.link).toContain("/calls?app=acme-sales&from=");
  expect(body.text).toContain(`FIRING: ${name}`);

  // The header's badge, and the notification's delivery on the history row.
  await page.reload();
  await expect(page.getByTestId("alerts-badge")).toBeVisible();
  expect(Number(await page.getByTestId("alerts-badge").textContent())).toBeGreaterThanOrEqual(1);
  await expect(page.locator(`[data-testid="alert-history"] tr[data-rule-id="${ruleId}"]`)).toContainText("delivered");

  // Evaluating again does not evaluate the same window again.
  await page.getByTestId("evaluate-now").click();
  await expect(page.getByTestId("evaluate-result")).toBeVisible();
  await expect(page.locator(`[data-testid="alert-history"] tr[data-rule-id="${ruleId}"]`)).toHaveCount(1);

  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);

  // Disable it: the row says so.
  await page.getByRole("button", { name: `Disable ${name}` }).click();
  await expect(page.locator(`[data-testid="alert-rules"] tr[data-rule-id="${ruleId}"]`)).toHaveAttribute("data-state", "off");
});

test("a bad rule is refused with the field named, and nothing is created", async ({ page }) => {
  await signIn(page, demoState().admin);
  await page.goto("/alerts");
  const form = page.getByRole("form", { name: "New alert rule" });
  await form.getByLabel("Name").fill("Leaky");
  await form.getByLabel("Destination URL").fill("http://169.254.169.254/latest/meta-data/");
  await form.getByTestId("create-rule").click();
  await expect(form.getByRole("alert")).toContainText("destination.url: 169.254.169.254 is a link-local address");
  await expect(page.locator('[data-testid="alert-rules"] tr[data-rule-id]', { hasText: "Leaky" })).toHaveCount(0);
});

test("viewers see the rules of their apps only, and cannot change them", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.admin);
  const adminCookie = await cookieHeader(page);
  const suffix = Date.now();
  for (const app of ["acme-sales", "acme-support"]) {
    const res = await request.post("/api/v1/alerts", {
      // A cookie-authenticated write must come from this server's pages (issue 12).
      headers: { cookie: adminCookie, origin: new URL(page.url()).origin },
      data: { name: `${app} rejected ${suffix}`, metric: "rejectedRate", filters: { app: [app] }, windowSeconds: 3600, condition: { op: "above", value: 50 }, minCalls: 5 },
    });
    expect(res.status()).toBe(201);
  }

  await page.context().clearCookies();
  await signIn(page, state.viewer);
  await page.goto("/alerts");
  await expect(page.locator('[data-testid="alert-rules"] tr', { hasText: `acme-support rejected ${suffix}` })).toBeVisible();
  await expect(page.locator('[data-testid="alert-rules"] tr', { hasText: `acme-sales rejected ${suffix}` })).toHaveCount(0);
  await expect(page.getByRole("form", { name: "New alert rule" })).toHaveCount(0);
  await expect(page.getByTestId("evaluate-now")).toHaveCount(0);

  const cookie = await cookieHeader(page);
  const listed = (await (await request.get("/api/v1/alerts", { headers: { cookie } })).json()) as { data: Array<{ filters: { app?: string[] } }> };
  for (const r of listed.data) expect(r.filters.app?.every((a) => state.viewer.apps.includes(a))).toBe(true);
  const refused = await request.post("/api/v1/alerts", { headers: { cookie, origin: new URL(page.url()).origin }, data: { name: "mine", metric: "calls", windowSeconds: 300, condition: { op: "above", value: 1 } } });
  expect(refused.status()).toBe(403);
});
