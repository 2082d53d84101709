/**
 * Recordings as two facts, the same on every page: the platform's flag and the link a
 * recording_generated webhook delivered. The demo replays links for only some flagged
 * calls, so both kinds exist.
 */
import { expect, test } from "@playwright/test";
import { numberIn, ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

interface Summary { flagged: number; withLink: number; awaiting: number; linkNotFlagged: number; links: number; linksForUnsyncedCalls: number }

test("the summary, the Recordings page, the calls table and a call's page agree", async ({ page }) => {
  const summary = ((await (await page.request.get("/api/v1/recordings/summary")).json()) as { data: Summary }).data;
  expect(summary.flagged).toBeGreaterThan(0);
  expect(summary.awaiting).toBeGreaterThan(0);
  expect(summary.withLink).toBeGreaterThan(0);
  // The API's lists hold what the summary counts.
  const awaiting = (await (await page.request.get("/api/v1/recordings/awaiting?perPage=1000")).json()) as { data: Array<{ app: string; sessionId: string }>; meta: { pagination: { total: number } } };
  expect(awaiting.meta.pagination.total).toBe(summary.awaiting);
  const linksList = (await (await page.request.get("/api/v1/recordings?perPage=1")).json()) as { meta: { pagination: { total: number } } };
  expect(linksList.meta.pagination.total).toBe(summary.links + summary.linksForUnsyncedCalls);

  // The overview says the same.
  await page.goto("/");
  await ready(page);
  expect(await numberIn(page, "rec-flagged")).toBe(summary.flagged);
  expect(await numberIn(page, "rec-with-link")).toBe(summary.withLink);

  // Recordings page: both lists, counted in their tabs.
  await page.getByTestId("rec-awaiting").click();
  await expect(page).toHaveURL(/view=awaiting/);
  await expect(page.getByTestId("tab-awaiting")).toHaveAttribute("aria-current", "page");
  await expect(page.getByTestId("tab-awaiting")).toContainText(`(${summary.awaiting.toLocaleString("en")})`);
  await expect(page.getByTestId("panel-recordings-awaiting").locator("tbody tr[data-session]").first()).toBeVisible();
  await expect(page.getByTestId("page-status")).toContainText(`${summary.awaiting.toLocaleString("en")} rows`);

  // A flagged call awaiting its link: its page says flagged, no link, and why.
  const first = page.getByTestId("panel-recordings-awaiting").locator("tbody tr[data-session]").first();
  const session = await first.getAttribute("data-session");
  await first.getByRole("link").first().click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(session!);
  await expect(page.getByTestId("rec-flag")).toHaveText("Yes");
  await expect(page.getByTestId("rec-links")).toHaveText("0");
  await expect(page.getByTestId("rec-missing")).toContainText("recording_generated webhook");

  // In the calls table, flagged-only and linked calls read differently.
  await page.goto("/calls?hasRecording=true");
  await ready(page);
  const rows = page.locator("tbody tr[data-session]");
  await expect(rows.first()).toBeVisible();
  const kinds = await rows.locator("[data-rec]").evaluateAll((els) => els.map((e) => e.getAttribute("data-rec")));
  expect(kinds).not.toContain("none");
  const linked = rows.filter({ has: page.locator('[data-rec="link"]') }).first();
  await expect(linked).toBeVisible();
  await linked.getByRole("link").first().click();
  await expect(page.getByTestId("rec-links")).not.toHaveText("0");
  await expect(page.getByTestId("panel-recordings").locator(".recording-list a").first()).toHaveAttribute("href", /^https:\/\//);

  // The tab back to the links lists them.
  await page.goto("/recordings?view=awaiting");
  await ready(page);
  await page.getByTestId("tab-links").click();
  await expect(page).not.toHaveURL(/view=/);
  await expect(page.getByTestId("panel-recordings").locator("tbody tr").first()).toBeVisible();
});
