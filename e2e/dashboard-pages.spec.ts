/**
 * Each analytics page with real synced data (admin and viewer), drill-down from the
 * overview to a call, screenshots at 1280 px (light) and 390 px (dark).
 */
import { expect, test } from "@playwright/test";
import { demoState } from "./fixture";
import { numberIn, ready, snap } from "./dashboard-helpers";
import { ADMIN_STATE, VIEWER_STATE } from "./storage";

const PAGES = [
  { path: "/", name: "overview", heading: "Overview" },
  { path: "/calls", name: "calls", heading: "Calls" },
  { path: "/participants", name: "participants", heading: "Participants" },
  { path: "/apps", name: "apps", heading: "Tenant apps" },
  { path: "/recordings", name: "recordings", heading: "Recordings" },
];

test.describe("as admin", () => {
  test.use({ storageState: ADMIN_STATE });

  test("every page shows synced data, at 1280 px light and 390 px dark", async ({ page }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    for (const p of PAGES) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.emulateMedia({ colorScheme: "light" });
      await page.goto(p.path);
      await expect(page.getByRole("heading", { level: 1, name: p.heading })).toBeVisible();
      await ready(page);
      await expect(page.locator(".error-state")).toHaveCount(0);
      await expect(page.locator(".empty-state")).toHaveCount(0);
      await snap(page, `${p.name}-1280-light`);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.emulateMedia({ colorScheme: "dark" });
      await page.reload();
      await ready(page);
      // Nothing wider than the phone but the scrolling tables.
      const wide = await page.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((e) => !e.closest(".table-scroll, .app-nav") && e.getBoundingClientRect().right > window.innerWidth + 1)
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}.${String(e.className)} ${Math.round(e.getBoundingClientRect().right)}`),
      );
      expect(wide, `${p.path} overflows at 390 px`).toEqual([]);
      await snap(page, `${p.name}-390-dark`);
    }
    expect(errors).toEqual([]);
  });

  test("the overview shows KPIs, charts, breakdowns and insights with their CSV links", async ({ page }) => {
    await page.goto("/");
    await ready(page);
    expect(await numberIn(page, "kpi-calls")).toBeGreaterThan(0);
    for (const id of ["kpis", "daily", "breakdowns", "durations", "engagement", "heatmap", "apps"]) {
      const panel = page.getByTestId(`panel-${id}`);
      await expect(panel).toBeVisible();
      const href = await panel.getByTestId("csv-link").first().getAttribute("href");
      expect(href).toMatch(/^\/api\/v1\/.+format=csv/);
      const res = await page.request.get(href!);
      expect(res.status(), href!).toBe(200);
    }
    await expect(page.locator(".recharts-surface").first()).toBeVisible();
    await expect(page.locator(".breakdown[data-dimension]")).toHaveCount(4);
    // A period compares with the one before it.
    await page.getByLabel("Period").selectOption("90d");
    await expect(page).toHaveURL(/from=\d+/);
    await expect(page.getByTestId("kpi-calls").locator(".kpi-change")).toBeVisible();
  });

  test("drill down: overview → an app's calls → a call", async ({ page }) => {
    const app = demoState().emulator.apps[0].appId;
    await page.goto("/");
    await ready(page);
    await page.locator(`tr[data-app="${app}"] a`).first().click();
    await expect(page).toHaveURL(new RegExp(`/calls\\?app=${app}`));
    await expect(page.getByRole("heading", { level: 1, name: "Calls" })).toBeVisible();
    const first = page.locator("tbody tr[data-session]").first();
    await expect(first).toBeVisible();
    const session = await first.getAttribute("data-session");
    await first.getByRole("link").first().click();
    await expect(page).toHaveURL(new RegExp(`/calls/${encodeURIComponent(session!).replace(/\./g, "\\.")}\\?app=${app}`));
    await expect(page.getByRole("heading", { level: 1 })).toContainText(session!);
    await expect(page.getByTestId("call-facts")).toContainText(app);
    await expect(page.getByTestId("panel-timeline")).toBeVisible();
    await expect(page.getByTestId("panel-minutes")).toBeVisible();
    await expect(page.getByTestId("panel-recordings")).toBeVisible();
    await page.getByText("Raw record (for support)").click();
    await expect(page.locator(".raw-record pre")).toContainText(session!);
    await snap(page, "call-1280-light");
  });

  test("participants: sortable, and a participant leads to their calls", async ({ page }) => {
    await page.goto("/participants");
    await ready(page);
    const firstCalls = async () => Number((await page.locator("tbody tr").first().locator("td").nth(2).innerText()).replace(/\D/g, ""));
    const most = await firstCalls();
    await page.getByRole("button", { name: /^Calls/ }).click();
    await expect(page).toHaveURL(/order=asc/);
    await expect.poll(firstCalls).toBeLessThanOrEqual(most);
    await page.getByRole("button", { name: /^Total minutes/ }).click();
    await expect(page).toHaveURL(/sort=minutes/);
    await expect(page.locator("th[aria-sort]")).toContainText("Total minutes");
    // The sorted page, not the previous one still shown while it loads; and the uid is
    // taken from where the click led, should the table re-render in between anyway.
    await expect(page.locator(".is-stale")).toHaveCount(0);
    await page.getByTestId("participant-link").first().click();
    await expect(page).toHaveURL(new RegExp(`/calls\\?.*uid=`));
    const uid = new URL(page.url()).searchParams.get("uid")!;
    expect(uid).not.toBe("");
    await expect(page.getByLabel("Participant uid")).toHaveValue(uid);
    expect(await numberIn(page, "total-calls")).toBeGreaterThan(0);
  });
});

test.describe("as viewer", () => {
  test.use({ storageState: VIEWER_STATE });

  test("a viewer sees only their app", async ({ page }) => {
    const { viewer, emulator } = demoState();
    const hidden = emulator.apps.map((a) => a.appId).filter((a) => !viewer.apps.includes(a));
    expect(hidden.length).toBeGreaterThan(0);
    await page.goto("/");
    await ready(page);
    for (const a of viewer.apps) await expect(page.locator(`tr[data-app="${a}"]`)).toBeVisible();
    for (const a of hidden) await expect(page.locator(`tr[data-app="${a}"]`)).toHaveCount(0);
    await page.getByTestId("app-picker").locator("summary").click();
    await expect(page.getByTestId("app-picker").getByRole("checkbox")).toHaveCount(viewer.apps.length);
    await page.goto("/calls");
    await ready(page);
    const apps = await page.locator("tbody tr[data-session] td:nth-child(2)").allInnerTexts();
    expect(apps.length).toBeGreaterThan(0);
    expect(new Set(apps)).toEqual(new Set(viewer.apps));
    await page.goto("/apps");
    await ready(page);
    for (const a of hidden) await expect(page.locator(`tr[data-app="${a}"]`)).toHaveCount(0);
    // Asking for a hidden app by URL: the API answers 404, the page says so.
    await page.goto(`/calls?app=${hidden[0]}`);
    await expect(page.getByRole("alert").first()).toContainText("not found");
  });
});
