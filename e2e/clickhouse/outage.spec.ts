/**
 * ClickHouse goes away while people use the dashboard (runs after clickhouse.spec.ts: the
 * launcher, e2e/clickhouse/launch.ts, stops the server on SIGUSR2 and starts it again on
 * SIGUSR1). Every page says that the warehouse cannot be reached, in the product's words,
 * instead of a generic error page; the health check answers 503; when ClickHouse is back,
 * the same pages show their data again.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { ADMIN_STATE } from "../storage";

test.use({ storageState: ADMIN_STATE });
test.describe.configure({ mode: "serial" });

const UNREACHABLE = /analytics warehouse \(ClickHouse\) cannot be reached/;

function launcherPid(): number {
  return Number(readFileSync(path.join(`${path.resolve(process.env.E2E_DIR ?? ".tmp/e2e-clickhouse")}-clickhouse`, "launch.pid"), "utf8"));
}

async function healthStatus(request: APIRequestContext): Promise<number> {
  return (await request.get("/api/health")).status();
}

test("with ClickHouse down every page says so, and shows its data again once it is back", async ({ page }) => {
  test.setTimeout(120_000);
  // A call to open while ClickHouse is away (its detail is read from ClickHouse too).
  const list = (await (await page.request.get("/api/v1/calls?perPage=1")).json()) as { data: Array<{ sessionId: string; app: string }> };
  const call = list.data[0];
  expect(call).toBeDefined();
  const pid = launcherPid();

  process.kill(pid, "SIGUSR2");
  try {
    await expect.poll(() => healthStatus(page.request), { timeout: 30_000 }).toBe(503);

    await page.goto("/events");
    await expect(page.getByRole("heading", { level: 1, name: "Events" })).toBeVisible();
    await expect(page.locator("main").getByRole("alert")).toHaveText(UNREACHABLE);

    await page.goto(`/calls/${encodeURIComponent(call.sessionId)}?app=${encodeURIComponent(call.app)}`);
    await expect(page.getByRole("heading", { level: 1, name: "Call" })).toBeVisible();
    await expect(page.locator("main").getByRole("alert")).toHaveText(UNREACHABLE);
    await expect(page.getByRole("link", { name: "Try again" })).toBeVisible();

    await page.goto("/calls");
    await expect(page.getByText(UNREACHABLE).first()).toBeVisible();
  } finally {
    process.kill(pid, "SIGUSR1");
  }
  await expect.poll(() => healthStatus(page.request), { timeout: 60_000 }).toBe(200);
  await page.goto("/events");
  await expect(page.getByTestId("events-total")).toBeVisible();
  await page.goto(`/calls/${encodeURIComponent(call.sessionId)}?app=${encodeURIComponent(call.app)}`);
  await expect(page.getByText(call.sessionId).first()).toBeVisible();
});
