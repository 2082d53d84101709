/**
 * Issue 29 §6: the uid filter on Participants lists everyone in that person's calls; the
 * search ("Find a participant", the API's `person`) finds the person's own row(s).
 */
import { expect, test } from "@playwright/test";
import { ready } from "./dashboard-helpers";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE, timezoneId: "UTC" });

interface Row {
  app: string;
  uid: string;
  calls: number;
}

test("the search lists the person's own rows, where the uid filter lists everyone in their calls", async ({ page }) => {
  // The busiest person: their calls hold other people.
  const top = ((await (await page.request.get("/api/v1/usage/participants?perPage=1")).json()) as { data: Row[] }).data[0]!;
  const inTheirCalls = (await (await page.request.get(`/api/v1/usage/participants?uid=${encodeURIComponent(top.uid)}&perPage=1000`)).json()) as { data: Row[] };
  expect(inTheirCalls.data.length, "the uid filter lists everyone in the calls").toBeGreaterThan(1);
  const theirRows = inTheirCalls.data.filter((r) => r.uid === top.uid);

  await page.goto("/participants?tz=UTC");
  await ready(page);
  // Letters in the other case still find them.
  const typed = top.uid.replace(/[a-z]/, (c) => c.toUpperCase());
  const search = page.getByLabel("Find a participant");
  await search.fill(typed);
  await search.press("Enter");
  await expect(page).toHaveURL((u) => u.searchParams.get("person") === typed);
  const rows = page.getByTestId("panel-participants").locator("tbody tr[data-uid]");
  const shownUids = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-uid") ?? ""));
  // The previous rows stay on screen while the search loads: wait for the answer.
  await expect.poll(async () => (await shownUids()).every((uid) => uid.toLowerCase().includes(top.uid.toLowerCase()))).toBe(true);
  const uids = await shownUids();
  expect(uids.length).toBeLessThan(inTheirCalls.data.length);
  expect(uids).toContain(top.uid);

  // With the uid filter too: only the person, with the same counts as in the list of everyone.
  await page.goto(`/participants?tz=UTC&uid=${encodeURIComponent(top.uid)}&person=${encodeURIComponent(top.uid)}`);
  await ready(page);
  await expect(rows).toHaveCount(theirRows.length);
  await expect(page.getByLabel("Find a participant")).toHaveValue(top.uid);
  const api = (await (await page.request.get(`/api/v1/usage/participants?uid=${encodeURIComponent(top.uid)}&person=${encodeURIComponent(top.uid)}`)).json()) as { data: Row[]; meta: { pagination: { total: number } } };
  expect(api.data.map((r) => [r.app, r.uid, r.calls])).toEqual(theirRows.map((r) => [r.app, r.uid, r.calls]));
  expect(api.meta.pagination.total).toBe(theirRows.length);

  // The CSV link carries the search: the same rows.
  const href = await page.getByTestId("panel-participants").getByTestId("csv-link").getAttribute("href");
  expect(href).toContain("person=");
  const csv = await (await page.request.get(href!)).text();
  expect(csv.trim().split("\n")).toHaveLength(1 + theirRows.length);

  // Nothing found says so.
  await page.getByLabel("Find a participant").fill("no-such-person-zz");
  await page.getByLabel("Find a participant").press("Enter");
  await expect(page.getByTestId("panel-participants")).toContainText('No participant\'s uid contains "no-such-person-zz"');
});

test("a search too long is refused by name", async ({ page }) => {
  const res = await page.request.get(`/api/v1/usage/participants?person=${"x".repeat(257)}`);
  expect(res.status()).toBe(400);
  expect(((await res.json()) as { error: { code: string; parameter: string } }).error).toMatchObject({ code: "invalid_parameter", parameter: "person" });
});
