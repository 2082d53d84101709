/**
 * Events: trigger counts per day (chart and table), recent and rejected deliveries with
 * their reason, and CSV downloads whose rows equal what the page shows.
 */
import { expect, test } from "@playwright/test";
import { parse } from "csv-parse/sync";
import { chatEvent } from "@/lib/emulator/webhooks";
import { demoState, signIn } from "./fixture";
import { cookieHeader, deliver } from "./ops-helpers";

const RUN = Date.now().toString(36);

test("counts per day: the chart, the table and its CSV agree", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/events?days=365");
  await expect(page.getByRole("heading", { level: 1, name: "Events" })).toBeVisible();
  const total = Number((await page.getByTestId("events-total").innerText()).replace(/[^0-9]/g, ""));
  expect(total).toBeGreaterThan(0);
  await expect(page.locator(".ops-chart svg").first()).toBeVisible();
  // The older days=365 link becomes the filter bar's period (in the URL), and survives a reload.
  await expect(page).toHaveURL(/from=\d+&to=\d+/);
  await page.reload();
  const from = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
  await expect(page.getByTestId("filter-bar").getByLabel("From")).toHaveValue(from);

  const rows = page.locator('[data-testid="events-counts"] tbody tr');
  // The page writes a day as people read it ("Nov 27, 2026"); its ISO day, the CSV's, is on the cell.
  const shown = await rows.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.getAttribute("data-day") ?? td.textContent?.trim() ?? "")));
  const href = await page.getByTestId("events-csv").getAttribute("href");
  const res = await request.get(href!, { headers: { cookie: await cookieHeader(page) } });
  expect(res.status()).toBe(200);
  expect(res.headers()["content-type"]).toContain("text/csv");
  const csv = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
  expect(csv.slice(0, shown.length).map((r) => [r.day, r.app, r.trigger, r.category, Number(r.count).toLocaleString("en")])).toEqual(shown);
  expect(csv.reduce((n, r) => n + Number(r.count), 0)).toBe(total);
});

test("a chat event sent now is counted today, once, even when repeated", async ({ page }) => {
  const state = demoState();
  const app = state.emulator.apps[0];
  await signIn(page, state.admin);
  await page.goto(`/events?app=${app.appId}&days=7`);
  const before = Number((await page.getByTestId("events-chat").innerText()).replace(/[^0-9]/g, ""));
  const ev = chatEvent("message_sent", { ctx: { appId: app.appId, region: app.region as "us", webhook: "wh-callboard" }, at: Math.floor(Date.now() / 1000), users: [`u-${RUN}`, `w-${RUN}`, `x-${RUN}`], seed: Date.now() % 100_000 });
  const report = await deliver(app.appId, [ev, { ...ev, repeat: true }]);
  expect(report.ok).toBe(2);
  await page.reload();
  const after = Number((await page.getByTestId("events-chat").innerText()).replace(/[^0-9]/g, ""));
  expect(after).toBe(before + 1);
});

test("rejected deliveries are listed with their reason, and their CSV matches", async ({ page, request }) => {
  const state = demoState();
  const app = state.emulator.apps[0];
  const ev = chatEvent("message_sent", { ctx: { appId: app.appId, region: app.region as "us", webhook: "wh-callboard" }, at: Math.floor(Date.now() / 1000), users: ["a", "b", "c"] });
  const report = await deliver(app.appId, [ev], { username: "platform", password: `wrong-${RUN}` });
  expect(report.byStatus).toEqual({ "401": 1 });

  await signIn(page, state.admin);
  await page.goto("/events?outcome=rejected");
  const first = page.locator('[data-testid="deliveries"] tbody tr').first();
  await expect(first).toHaveAttribute("data-kind", "rejected");
  await expect(first.getByTestId("reject-reason")).not.toBeEmpty();
  await expect(first).toContainText("401");

  const href = await page.getByTestId("deliveries-csv").getAttribute("href");
  const res = await request.get(href!, { headers: { cookie: await cookieHeader(page) } });
  const csv = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
  const shown = await page.locator('[data-testid="deliveries"] tbody tr').count();
  expect(csv.length).toBe(shown);
  expect(csv.every((r) => r.kind === "rejected")).toBe(true);
  expect(csv[0].outcome).toBe("401");
});

test("events: a viewer sees only their apps; bad parameters get a clear 400", async ({ page, request }) => {
  const state = demoState();
  await signIn(page, state.viewer);
  const cookie = await cookieHeader(page);
  const res = await request.get("/api/v1/events?days=365", { headers: { cookie } });
  const body = (await res.json()) as { data: Array<{ app: string }> };
  for (const r of body.data) expect(state.viewer.apps).toContain(r.app);
  const deliveries = (await (await request.get("/api/v1/events/deliveries", { headers: { cookie } })).json()) as { data: Array<{ app: string }> };
  for (const r of deliveries.data) expect(state.viewer.apps).toContain(r.app);
  for (const bad of ["days=0", "days=abc", "tz=Mars/Base", "outcome=maybe", "limit=9999"]) {
    const r = await request.get(`/api/v1/events?${bad}`, { headers: { cookie } });
    expect(r.status(), bad).toBe(400);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_parameter");
  }
});
