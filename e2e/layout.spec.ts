/**
 * Every page at a 390 px phone and a 1280 px laptop: the page itself never scrolls
 * sideways; a table too wide for its panel scrolls inside its own box and says so; the
 * charts stay legible on the phone (bar labels apart, the whole day in the heatmap,
 * timeline labels at full size).
 */
import { expect, test, type Page } from "@playwright/test";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

const WIDTHS = [390, 1280] as const;

async function busiestCall(page: Page): Promise<string> {
  const res = await page.request.get("/api/v1/calls?perPage=1&sort=participants");
  const { data } = (await res.json()) as { data: Array<{ app: string; sessionId: string }> };
  return `/calls/${encodeURIComponent(data[0].sessionId)}?app=${data[0].app}`;
}

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle").catch(() => undefined);
  // The scroll boxes measure themselves after hydration.
  await page.waitForTimeout(200);
}

/** How far the page scrolls sideways, and the wide boxes that show no cue. */
function sideways(page: Page) {
  return page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    silent: [...document.querySelectorAll<HTMLElement>(".table-scroll")]
      .filter((box) => box.scrollWidth > box.clientWidth + 1)
      .filter((box) => !box.parentElement?.querySelector(".scroll-cue"))
      .map((box) => box.getAttribute("aria-label") ?? box.getAttribute("aria-labelledby") ?? "a table"),
  }));
}

test("no page scrolls sideways at 390 or 1280 px; wide tables scroll in their own box with a cue", async ({ page }) => {
  test.setTimeout(180_000);
  const pages = ["/", "/calls", await busiestCall(page), "/participants", "/apps", "/recordings", "/live", "/events", "/sync", "/statements", "/alerts", "/settings", "/settings/apps", "/settings/users", "/settings/tokens", "/settings/audit", "/settings/prices"];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const path of pages) {
      await page.goto(path);
      await settle(page);
      const { overflow } = await sideways(page);
      expect.soft(overflow, `${path} at ${width} px scrolls sideways by ${overflow} px`).toBeLessThanOrEqual(0);
      // A box shows its cue once it has measured itself after hydration, which on a busy
      // machine can come later than the settle above: wait for it rather than race it.
      await expect.configure({ soft: true }).poll(async () => (await sideways(page)).silent, { message: `${path} at ${width} px: wide tables without a cue`, timeout: 5_000 }).toEqual([]);
    }
  }
});

test("at 1280 px the calls table fits its panel, recording column included", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/calls");
  await settle(page);
  const box = page.getByTestId("panel-calls").locator(".table-scroll");
  const fit = await box.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right }));
  expect(fit.scroll).toBeLessThanOrEqual(fit.client);
  const last = page.getByTestId("panel-calls").locator("thead th").last();
  expect((await last.boundingBox())!.x + (await last.boundingBox())!.width).toBeLessThanOrEqual(fit.right + 1);
});

test("on a phone the charts stay legible", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  await settle(page);
  // Bar labels never overlap.
  for (const id of ["durations", "engagement"]) {
    // The x axis's labels: the tick values on the lowest line of the chart.
    const boxes = await page
      .getByTestId(`panel-${id}`)
      .locator("text.recharts-cartesian-axis-tick-value")
      .evaluateAll((ts) => {
        const rects = ts.map((t) => t.getBoundingClientRect());
        const bottom = Math.max(...rects.map((r) => Math.round(r.top)));
        return rects.filter((r) => Math.round(r.top) === bottom).map((r) => ({ left: r.left, right: r.right })).sort((a, b) => a.left - b.left);
      });
    expect(boxes.length, id).toBeGreaterThan(3);
    for (let i = 1; i < boxes.length; i++) expect(boxes[i].left, `${id}: tick ${i} overlaps the one before`).toBeGreaterThanOrEqual(boxes[i - 1].right);
  }
  // The heatmap shows the whole day, 23:00 included, without scrolling.
  const heat = page.getByTestId("panel-heatmap");
  const lastHour = await heat.locator("tbody tr").first().locator("td").last().boundingBox();
  const panel = await heat.boundingBox();
  expect(lastHour!.x + lastHour!.width).toBeLessThanOrEqual(panel!.x + panel!.width);
  // Timeline labels at their full size.
  await page.goto(await busiestCall(page));
  await settle(page);
  const sizes = await page.getByTestId("timeline").locator(".timeline-label, .timeline-tick").evaluateAll((els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => parseFloat(getComputedStyle(e).fontSize) * (e.getBoundingClientRect().height > 0 ? 1 : 0)));
  expect(sizes.length).toBeGreaterThan(2);
  expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11);
});

test("at 1280 px the header keeps the navigation and who is signed in on one line", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/");
  const nav = (await page.getByRole("navigation", { name: "Main" }).boundingBox())!;
  const signOut = (await page.getByRole("button", { name: "Sign out" }).boundingBox())!;
  const email = page.getByTestId("signed-in-email");
  // One line: the Sign out button sits beside the navigation, not under it.
  expect(signOut.y).toBeLessThan(nav.y + nav.height);
  // The email is whole in the page (a long one is cut with an ellipsis and titled).
  await expect(email).toHaveAttribute("title", /@/);
  expect(await email.evaluate((el) => el.getBoundingClientRect().right <= window.innerWidth)).toBe(true);
});
