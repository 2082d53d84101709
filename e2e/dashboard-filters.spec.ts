/**
 * Every filter of the model on the calls page: changing it changes the URL and the
 * numbers, a reload keeps both, the back button returns. And a CSV download lists
 * exactly the rows the table shows.
 */
import { expect, test, type Page } from "@playwright/test";
import { parse } from "csv-parse/sync";
import { demoState } from "./fixture";
import { numberIn, ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

interface FilterCase {
  name: string;
  param: RegExp;
  apply: (page: Page) => Promise<void>;
  /** What the page shows after a reload, to prove the filter survived it. */
  kept: (page: Page) => Promise<void>;
}

async function totalCalls(page: Page): Promise<number> {
  await expect(page.locator(".is-stale")).toHaveCount(0);
  return numberIn(page, "total-calls");
}

test("each filter changes the URL and the numbers; reload and back keep them", async ({ page }) => {
  test.setTimeout(150_000);
  const app = demoState().emulator.apps[0].appId;
  await page.goto("/participants");
  await ready(page);
  const uid = await page.getByTestId("participant-link").first().innerText();

  const select = (label: string, value: string): FilterCase => ({
    name: label,
    param: new RegExp(`[?&]\\w+=${value}`),
    apply: async (p) => {
      await p.getByLabel(label, { exact: true }).selectOption(value);
    },
    kept: async (p) => expect(p.getByLabel(label, { exact: true })).toHaveValue(value),
  });
  const text = (label: string, param: string, value: string): FilterCase => ({
    name: label,
    param: new RegExp(`[?&]${param}=${encodeURIComponent(value)}`),
    apply: async (p) => {
      await p.getByLabel(label, { exact: true }).fill(value);
      await p.getByLabel(label, { exact: true }).press("Enter");
    },
    kept: async (p) => expect(p.getByLabel(label, { exact: true })).toHaveValue(value),
  });
  const cases: FilterCase[] = [
    {
      name: "app",
      param: new RegExp(`[?&]app=${app}`),
      apply: async (p) => {
        await p.getByTestId("app-picker").locator("summary").click();
        await p.getByTestId("app-picker").getByRole("checkbox", { name: new RegExp(app) }).check();
        await p.getByTestId("app-picker").locator("summary").click();
      },
      kept: async (p) => expect(p.getByTestId("app-picker").locator("summary")).not.toHaveText("All apps"),
    },
    select("Type", "video"),
    select("Mode", "meet"),
    select("Status", "unanswered"),
    select("Receiver", "group"),
    select("Recording", "true"),
    text("Participant uid", "uid", uid),
    text("Participants", "participantsCount", "2"),
    { ...select("Period", "30d"), param: /[?&]from=\d+&to=\d+|[?&]to=\d+.*from=|from=\d+/ },
  ];

  await page.goto("/calls");
  await ready(page);
  const all = await totalCalls(page);
  expect(all).toBeGreaterThan(0);
  for (const c of cases) {
    await c.apply(page);
    await expect(page, c.name).toHaveURL(c.param);
    await expect.poll(() => totalCalls(page), { message: `${c.name} changes the total` }).not.toBe(all);
    const filtered = await totalCalls(page);
    await page.reload();
    await ready(page);
    await c.kept(page);
    expect(await totalCalls(page), `${c.name} after reload`).toBe(filtered);
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => totalCalls(page)).toBe(all);
  }

  // The back button returns to the previous filters.
  await page.getByLabel("Type", { exact: true }).selectOption("audio");
  await expect(page).toHaveURL(/type=audio/);
  await page.getByLabel("Mode", { exact: true }).selectOption("call");
  await expect(page).toHaveURL(/mode=call/);
  await page.goBack();
  await expect(page).not.toHaveURL(/mode=call/);
  await expect(page.getByLabel("Mode", { exact: true })).toHaveValue("");
  await expect(page.getByLabel("Type", { exact: true })).toHaveValue("audio");
  await page.goto("/calls");
  await ready(page);

  // Time zone: same calls, other local times.
  const firstStart = () => page.locator("tbody tr[data-session] td").first().innerText();
  const utc = await firstStart();
  await page.getByLabel("Time zone").selectOption("Asia/Tokyo");
  await expect(page).toHaveURL(/tz=Asia(%2F|\/)Tokyo/);
  await expect.poll(firstStart).not.toBe(utc);
  const shown = await firstStart();
  await page.reload();
  await ready(page);
  await expect(page.getByLabel("Time zone")).toHaveValue("Asia/Tokyo");
  expect(await firstStart()).toBe(shown);
  expect(await totalCalls(page)).toBe(all);
});

test("sorting and paging are in the URL and served by the server", async ({ page }) => {
  await page.goto("/calls");
  await ready(page);
  await page.getByRole("button", { name: /^Duration/ }).click();
  await expect(page).toHaveURL(/sort=duration/);
  await expect(page.locator('th[aria-sort="descending"]')).toContainText("Duration");
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByTestId("page-status")).toContainText("Page 2");
  await page.reload();
  await expect(page.getByTestId("page-status")).toContainText("Page 2");
  await expect(page.locator('th[aria-sort="descending"]')).toContainText("Duration");
});

test("a CSV download lists exactly the table's rows", async ({ page }) => {
  await page.goto("/calls?type=audio&sort=minutes&order=asc");
  await ready(page);
  const sessions = await page.locator("tbody tr[data-session]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session")));
  const total = await numberIn(page, "total-calls");
  const href = await page.getByTestId("panel-calls").getByTestId("csv-link").getAttribute("href");
  expect(href).toContain("type=audio");
  expect(href).toContain("format=csv");
  const res = await page.request.get(href!);
  expect(res.status()).toBe(200);
  const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
  expect(rows.length).toBe(total);
  expect(rows.slice(0, sessions.length).map((r) => r.sessionId)).toEqual(sessions);
  expect(rows.every((r) => r.type === "audio")).toBe(true);

  await page.goto("/participants?sort=minutes");
  await ready(page);
  const uids = await page.getByTestId("participant-link").allInnerTexts();
  const pHref = await page.getByTestId("panel-participants").getByTestId("csv-link").getAttribute("href");
  const pRows = parse(await (await page.request.get(pHref!)).text(), { columns: true }) as Array<Record<string, string>>;
  expect(pRows.slice(0, uids.length).map((r) => r.uid.replace(/^'(?=[=+\-@\t\r])/, ""))).toEqual(uids);
});
