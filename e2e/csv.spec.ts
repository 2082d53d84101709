/**
 * CSVs people can use: each download is one file named for what it holds (report,
 * filters, range, zone), times as ISO 8601 in the page's zone beside the epoch seconds,
 * codes beside the dashboard's labels, and no two identical download links on a panel.
 */
import { expect, test, type Page } from "@playwright/test";
import { parse } from "csv-parse/sync";
import { readFileSync } from "node:fs";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

const KOLKATA = 19_800; // +05:30, no DST
/** Local midnight of 2020-01-01 and of tomorrow in Kolkata: a range that holds every demo call. */
const FROM = Date.UTC(2020, 0, 1) / 1000 - KOLKATA;
const TO = Math.floor((Date.now() / 1000 + KOLKATA) / 86_400 + 1) * 86_400 - KOLKATA;
const lastDay = new Date((TO - 1 + KOLKATA) * 1000).toISOString().slice(0, 10);

/** Clicks a panel's download link and reads the file the browser saved. */
async function download(page: Page, panel: string): Promise<{ name: string; rows: Array<Record<string, string>>; header: string[] }> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.getByTestId(`panel-${panel}`).getByTestId("csv-link").click()]);
  const text = readFileSync((await file.path())!, "utf8");
  return { name: file.suggestedFilename(), rows: parse(text, { columns: true }), header: parse(text, { to: 1 })[0] };
}

test("the calls CSV: named for its filters and range, ISO times in the page's zone, labels beside codes", async ({ page }) => {
  await page.goto(`/calls?tz=Asia/Kolkata&type=video&from=${FROM}&to=${TO}`);
  await ready(page);
  const { name, rows, header } = await download(page, "calls");
  expect(name).toBe(`callboard-calls_video_2020-01-01_to_${lastDay}_Asia-Kolkata.csv`);
  // The data columns first, as the API names them; the columns for people after them.
  expect(header.slice(0, 3)).toEqual(["app", "sessionId", "type"]);
  expect(header.slice(-8)).toEqual(["typeLabel", "modeLabel", "statusLabel", "receiverTypeLabel", "initiatedAtIso", "startedAtIso", "endedAtIso", "startAtIso"]);
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) {
    expect(r.typeLabel).toBe("Video");
    const local = new Date((Number(r.startAt) + KOLKATA) * 1000).toISOString().slice(0, 19);
    expect(r.startAtIso).toBe(`${local}+05:30`);
    if (r.endedAt) expect(r.endedAtIso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:30$/);
    else expect(r.endedAtIso).toBe("");
  }
});

test("two downloads of different ranges or reports never share a name", async ({ page }) => {
  await page.goto(`/?from=${FROM}&to=${TO}&tz=Asia/Kolkata`);
  await ready(page);
  const daily = await download(page, "daily");
  const breakdowns = await download(page, "breakdowns");
  expect(daily.name).toMatch(/^callboard-daily_2020-01-01_to_\d{4}-\d{2}-\d{2}_Asia-Kolkata\.csv$/);
  expect(breakdowns.name).toMatch(/^callboard-breakdowns_/);
  // Breakdowns say what a code means.
  expect(breakdowns.header.slice(-2)).toEqual(["dimensionLabel", "valueLabel"]);
  expect(breakdowns.rows.find((r) => r.value === "meet")?.valueLabel).toBe("Meeting");

  await page.goto("/");
  await ready(page);
  const allTime = await download(page, "daily");
  expect(allTime.name).toMatch(/^callboard-daily_all-time_as-of_\d{4}-\d{2}-\d{2}\.csv$/);
  expect(allTime.name).not.toBe(daily.name);
});

test("the tenant apps trend has one download per app, each named by its app", async ({ page }) => {
  await page.goto("/apps");
  await ready(page);
  const links = page.getByTestId("panel-trend").getByTestId("csv-link");
  const n = await links.count();
  expect(n).toBeGreaterThan(1);
  const texts = await links.allInnerTexts();
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  const labels = await links.evaluateAll((as) => as.map((a) => a.getAttribute("aria-label")));
  expect(new Set(texts).size).toBe(n);
  expect(new Set(hrefs).size).toBe(n);
  expect(new Set(labels).size).toBe(n);
  // The legend names the apps as the links do.
  const legend = await page.getByTestId("panel-trend").locator(".recharts-legend-item-text").allInnerTexts();
  expect(legend.sort()).toEqual([...texts].sort());
});
