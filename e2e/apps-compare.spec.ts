/**
 * Tenant apps compared fully: each app's unanswered and rejected rates, averages and
 * change against the previous period, checked against the calls list of that app.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

const DAY = 86_400;

test("each app's rates match its calls, with the change against the period before", async ({ page }) => {
  const to = Math.floor(Date.now() / 1000 / DAY + 1) * DAY;
  const from = to - 90 * DAY;
  await page.goto(`/apps?from=${from}&to=${to}`);
  await ready(page);
  const rows = page.getByTestId("apps-quality").locator("tbody tr");
  await expect(rows.first()).toBeVisible();
  await expect(page.getByTestId("panel-quality")).toContainText("period just before");
  for (const row of await rows.all()) {
    const app = (await row.getAttribute("data-app"))!;
    const total = async (extra: string) =>
      ((await (await page.request.get(`/api/v1/calls?app=${app}&from=${from}&to=${to}&perPage=1${extra}`)).json()) as { meta: { pagination: { total: number } } }).meta.pagination.total;
    const [calls, unanswered, rejected] = [await total(""), await total("&status=unanswered"), await total("&status=rejected")];
    const pct = (n: number) => (calls === 0 ? "0%" : `${(Math.round((n / calls) * 1000) / 10).toString()}%`);
    await expect(row.getByTestId("q-calls")).toContainText(calls.toLocaleString("en"));
    await expect(row.getByTestId("q-unanswered")).toContainText(pct(unanswered));
    await expect(row.getByTestId("q-rejected")).toContainText(pct(rejected));
    // The same count as the side-by-side table.
    await expect(page.getByTestId("apps-table").locator(`tr[data-app="${app}"] [data-testid="calls"]`)).toHaveText(calls.toLocaleString("en"));
  }
});
