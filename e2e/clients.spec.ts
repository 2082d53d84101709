/**
 * Clients and platforms: the Apps page breaks participant sessions down by platform,
 * SDK version, audio only and camera (what the join webhooks say), as the report's JSON
 * and CSV do; the call page says what each person joined with.
 */
import { expect, test } from "@playwright/test";
import { parse } from "csv-parse/sync";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

interface ClientRow { app: string; dimension: string; value: string; sessions: number; calls: number; share: number }

test("the Apps page shows each app's platforms and SDKs, as the report and its CSV say", async ({ page }) => {
  await page.goto("/apps");
  await ready(page);
  const { data } = (await (await page.request.get("/api/v1/insights/clients")).json()) as { data: ClientRow[] };
  expect(data.length).toBeGreaterThan(0);
  // Each app's shares of a dimension add up to the whole.
  for (const app of new Set(data.map((r) => r.app))) {
    const shares = data.filter((r) => r.app === app && r.dimension === "platform").reduce((s, r) => s + r.share, 0);
    expect(Math.abs(shares - 1)).toBeLessThan(0.01);
  }
  const platforms = page.getByTestId("clients-platform");
  await expect(platforms).toBeVisible();
  for (const r of data.filter((x) => x.dimension === "platform")) {
    const cell = platforms.locator(`tr[data-value="${r.value}"] td[data-app="${r.app}"]`);
    await expect(cell).toHaveText(`${Math.round(r.share * 1000) / 10}%`.replace(/\.0%$/, "%"));
  }
  await expect(page.getByTestId("clients-sdk")).toBeVisible();
  await expect(page.getByTestId("clients-media")).toBeVisible();

  const csv = await page.request.get(await page.getByTestId("panel-clients").getByTestId("csv-link").getAttribute("href") ?? "");
  const rows = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
  expect(rows.map((r) => [r.app, r.dimension, r.value, Number(r.sessions)])).toEqual(data.map((r) => [r.app, r.dimension, r.value, r.sessions]));
});

test("the call page says what each person joined with", async ({ page }) => {
  await page.goto("/live");
  const card = page.locator('[data-testid="live-sessions"] > li').first();
  await card.getByTestId("live-call-link").click();
  await page.waitForURL(/\/calls\/[^/?]+\?app=/);
  const join = page.getByTestId("panel-events").locator('tr[data-trigger$="_participant_joined"]').first();
  await expect(join).toContainText(/sdk \w+/);
  // Kept per session (beyond the raw events' retention): each participant session's client.
  const ref = new URL(page.url());
  const { data: call } = (await (await page.request.get(`/api/v1/calls/${ref.pathname.split("/").at(-1)}?app=${ref.searchParams.get("app")}`)).json()) as { data: { clients: Array<{ occupant: string; platform: string; sdk: string }> } };
  expect(call.clients.length).toBeGreaterThan(0);
  const clients = page.getByTestId("call-clients");
  await expect(clients.locator("tbody tr")).toHaveCount(call.clients.length);
  await expect(clients.locator("tbody tr").first()).toContainText(call.clients[0].platform);
  await expect(clients.locator("tbody tr").first()).toContainText(call.clients[0].sdk);
});
