/**
 * Participants across apps: a uid used in several apps is one row, its calls the sum of
 * its rows per app, and its link lists its calls in all of them.
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

interface PerApp { app: string; uid: string; calls: number }
interface Across { uid: string; apps: string[]; calls: number }

test("one row per uid across apps, summing its rows per app", async ({ page }) => {
  /** Every row of a paged report. */
  async function all<T>(path: string): Promise<T[]> {
    const out: T[] = [];
    for (let p = 1; ; p++) {
      const body = (await (await page.request.get(`${path}?perPage=1000&page=${p}`)).json()) as { data: T[]; meta: { pagination: { total_pages: number } } };
      out.push(...body.data);
      if (p >= body.meta.pagination.total_pages) return out;
    }
  }
  const perApp = await all<PerApp>("/api/v1/usage/participants");
  const across = await all<Across>("/api/v1/usage/participants/combined");
  expect(new Set(across.map((r) => r.uid)).size).toBe(across.length);
  expect(across.length).toBe(new Set(perApp.map((r) => r.uid)).size);
  for (const r of across) {
    const rows = perApp.filter((p) => p.uid === r.uid);
    expect(r.apps).toEqual(rows.map((p) => p.app).sort());
    expect(r.calls).toBe(rows.reduce((n, p) => n + p.calls, 0));
  }

  await page.goto("/participants");
  await ready(page);
  await page.getByTestId("across-apps").check();
  await expect(page).toHaveURL(/view=across-apps/);
  const first = page.locator("tbody tr[data-uid]").first();
  await expect(first).toBeVisible();
  const uid = (await first.getAttribute("data-uid"))!;
  const want = across.find((r) => r.uid === uid)!;
  await expect(first.getByTestId("participant-apps")).toHaveText(want.apps.join(", "));
  // Its calls, in every app it is used in.
  await first.getByTestId("participant-link").click();
  await expect(page).toHaveURL(/\/calls\?/);
  for (const app of want.apps) await expect(page).toHaveURL(new RegExp(`app=${app}`));
  await ready(page);
  await expect(page.getByTestId("total-calls")).toHaveText(want.calls.toLocaleString("en"));
});
