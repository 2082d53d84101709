/**
 * The product in ClickHouse mode (playwright.clickhouse.config.ts): the demo synced its
 * apps into a real clickhouse-server and replayed their webhooks, which the forwarder
 * copied there. Every main page shows that data, a CSV download lists the table's rows,
 * the Sync page and /api/health tell the forwarding state.
 */
import { parse } from "csv-parse/sync";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { numberIn, ready } from "../dashboard-helpers";
import { ADMIN_STATE } from "../storage";

test.use({ storageState: ADMIN_STATE });

const PAGES = [
  { path: "/", heading: "Overview" },
  { path: "/calls", heading: "Calls" },
  { path: "/participants", heading: "Participants" },
  { path: "/apps", heading: "Tenant apps" },
  { path: "/recordings", heading: "Recordings" },
];

/** Calls the demo's sync runs wrote (SQLite keeps the runs; the calls themselves are only in ClickHouse). */
async function syncedCalls(request: APIRequestContext): Promise<number> {
  const res = await request.get("/api/v1/sync?limit=500");
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { data: Array<{ status: string; inserted: number }> };
  const total = body.data.filter((r) => r.status === "succeeded").reduce((n, r) => n + r.inserted, 0);
  expect(total).toBeGreaterThan(0);
  return total;
}

test("health reports ClickHouse readable and the forwarding backlog drained", async ({ request }) => {
  await expect
    .poll(async () => {
      const res = await request.get("/api/health");
      return { status: res.status(), body: (await res.json()) as Record<string, unknown> };
    }, { timeout: 30_000 })
    .toMatchObject({ status: 200, body: { status: "ok", database: "ok", clickhouse: "ok", forwarding: { pending: 0, failing: false } } });
  const text = await (await request.get("/api/health")).text();
  expect(text).not.toMatch(/password|http:\/\//i);
});

test("every main page shows the data synced into ClickHouse", async ({ page }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const calls = await syncedCalls(page.request);
  for (const p of PAGES) {
    await page.goto(p.path);
    await expect(page.getByRole("heading", { level: 1, name: p.heading })).toBeVisible();
    await ready(page);
    await expect(page.locator(".error-state")).toHaveCount(0);
    await expect(page.locator(".empty-state")).toHaveCount(0);
    if (p.path === "/") expect(Number((await page.getByTestId("kpi-calls").getByTestId("kpi-value").innerText()).replace(/\D/g, ""))).toBe(calls);
    if (p.path === "/calls") expect(await numberIn(page, "total-calls")).toBe(calls);
  }
  expect(errors).toEqual([]);
});

test("the events page counts the webhook events forwarded to ClickHouse", async ({ page }) => {
  const api = (await (await page.request.get("/api/v1/events?days=30")).json()) as { data: Array<{ count: number }> };
  const total = api.data.reduce((n, r) => n + r.count, 0);
  expect(total).toBeGreaterThan(0);
  await page.goto("/events?days=30");
  await expect(page.getByRole("heading", { level: 1, name: "Events" })).toBeVisible();
  expect(await numberIn(page, "events-total")).toBe(total);
});

test("a CSV download from ClickHouse lists exactly the table's rows", async ({ page }) => {
  await page.goto("/calls?sort=minutes&order=desc");
  await ready(page);
  const sessions = await page.locator("tbody tr[data-session]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session")));
  expect(sessions.length).toBeGreaterThan(0);
  const total = await numberIn(page, "total-calls");
  const href = await page.getByTestId("panel-calls").getByTestId("csv-link").getAttribute("href");
  expect(href).toContain("format=csv");
  const download = page.waitForEvent("download");
  await page.getByTestId("panel-calls").getByTestId("csv-link").click();
  const file = await (await download).path();
  const { readFileSync } = await import("node:fs");
  const rows = parse(readFileSync(file, "utf8"), { columns: true }) as Array<Record<string, string>>;
  expect(rows.length).toBe(total);
  expect(rows.slice(0, sessions.length).map((r) => r.sessionId)).toEqual(sessions);
});

test("the Sync page shows the forwarding to ClickHouse up to date", async ({ page }) => {
  await page.goto("/sync");
  const card = page.getByTestId("forwarding");
  await expect(card).toBeVisible();
  await expect(card).toHaveAttribute("data-state", "up to date", { timeout: 20_000 });
  await expect(page.getByTestId("forwarding-pending")).toHaveText("0");
  await expect(page.getByTestId("forwarding-error")).toHaveCount(0);
});
