/**
 * One way to write time: participant minutes as "70h 13m" (axes "10h", "20h"), a call's
 * duration as "17m 21s"; daily values plotted as they are (lines, not stacked smoothed
 * areas) on round ticks; KPI values on one line.
 */
import { expect, test, type Locator, type Page } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

const MINUTES = /^(0|<1m|\d[\d,]*h( \d{1,2}m)?|\d{1,2}m)$/;
const DURATION = /^(\d+h \d{2}m \d{2}s|\d{1,2}m \d{2}s|\d{1,2}s)$/;

/** The value axis's tick labels of a chart (the left-most column of labels). */
async function yTicks(chart: Locator): Promise<string[]> {
  return chart.locator("text.recharts-cartesian-axis-tick-value").evaluateAll((ts) => {
    const rects = ts.map((t) => ({ x: Math.round(t.getBoundingClientRect().right), y: t.getBoundingClientRect().top, text: t.textContent ?? "" }));
    const left = Math.min(...rects.map((r) => r.x));
    return rects.filter((r) => r.x <= left + 2).sort((a, b) => b.y - a.y).map((r) => r.text);
  });
}

/** Equal steps of 1, 2 or 5 × 10ⁿ from 0. */
function roundCounts(ticks: string[]): boolean {
  const values = ticks.map((t) => Number(t.replace(/K$/, "000").replace(/M$/, "000000")));
  const step = values[1] - values[0];
  const mantissa = step / 10 ** Math.floor(Math.log10(step));
  return values[0] === 0 && [1, 2, 5].includes(mantissa) && values.every((v, i) => v === i * step);
}

async function tilesOnOneLine(page: Page): Promise<void> {
  const tiles = page.locator(".kpi-value");
  expect(await tiles.count()).toBeGreaterThan(3);
  for (const tile of await tiles.all()) {
    const { height, line } = await tile.evaluate((e) => ({ height: e.getBoundingClientRect().height, line: parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.45 }));
    expect(height, await tile.innerText()).toBeLessThan(line * 1.5);
  }
}

test("minutes and durations are written one way, on round axes, daily values as they are", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/");
  await ready(page);

  const minutes = page.getByTestId("chart-minutes-per-day");
  await expect(minutes.locator(".recharts-line")).toHaveCount(2);
  await expect(page.locator(".recharts-area")).toHaveCount(0);
  // Straight segments between days: no curve commands in the lines.
  for (const d of await minutes.locator("path.recharts-curve").evaluateAll((ps) => ps.map((p) => p.getAttribute("d") ?? ""))) expect(d).not.toMatch(/[Cc]/);
  const minuteTicks = await yTicks(minutes);
  expect(minuteTicks[0]).toBe("0");
  for (const t of minuteTicks) expect(t).toMatch(MINUTES);

  // The tooltip writes a day's minutes like the axis.
  const box = (await minutes.locator(".recharts-wrapper").boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
  const tip = minutes.locator(".recharts-tooltip-item-value").first();
  await expect(tip).toBeVisible();
  expect((await tip.innerText()).trim()).toMatch(MINUTES);

  for (const id of ["chart-calls-per-day"]) expect(roundCounts(await yTicks(page.getByTestId(id))), id).toBe(true);
  for (const id of ["panel-durations", "panel-engagement"]) expect(roundCounts(await yTicks(page.getByTestId(id))), id).toBe(true);

  // The key figures: minutes, a duration, each on one line, here and on a phone.
  expect((await page.getByTestId("kpi-audioMinutes").getByTestId("kpi-value").innerText()).trim()).toMatch(MINUTES);
  expect((await page.getByTestId("kpi-avgDurationSeconds").getByTestId("kpi-value").innerText()).trim()).toMatch(DURATION);
  await tilesOnOneLine(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await tilesOnOneLine(page);

  // Tenant apps: participant minutes per call in minutes, not a bare decimal.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/apps");
  await ready(page);
  const perCall = await page.getByTestId("apps-table").locator("tbody tr td:nth-child(6)").allInnerTexts();
  expect(perCall.length).toBeGreaterThan(0);
  for (const v of perCall) expect(v.trim()).toMatch(MINUTES);
});
