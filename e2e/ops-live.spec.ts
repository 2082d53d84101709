/**
 * Live now: the page lists the calls the demo left going on, updates by itself when the
 * platform sends call events, and a viewer sees only their apps.
 */
import { expect, test } from "@playwright/test";
import { callEnded, callInitiated, callStarted, participantJoined, participantLeft, type CallEventOptions } from "@/lib/emulator/webhooks";
import { demoState, signIn } from "./fixture";
import { cookieHeader, deliver, liveCall } from "./ops-helpers";

const RUN = Date.now().toString(36);

test("the live page shows the demo's ongoing calls with who is in them", async ({ page }) => {
  const state = demoState();
  await signIn(page, state.admin);
  await page.goto("/live");
  await expect(page.getByRole("heading", { level: 1, name: "Live now" })).toBeVisible();
  const cards = page.locator('[data-testid="live-sessions"] > li');
  await expect(cards.first()).toBeVisible();
  // Every card names its people; the KPI counts the cards.
  const n = await cards.count();
  const calls = Number(await page.getByTestId("live-calls").innerText());
  const meetings = Number(await page.getByTestId("live-meetings").innerText());
  expect(calls + meetings).toBe(n);
  await expect(cards.first().locator("tr[data-occupant]").first()).toBeVisible();
});

test("the live page updates on its own when the emulator sends call events", async ({ page }) => {
  const state = demoState();
  const app = state.emulator.apps[0];
  const sessionId = `v1.${app.region}.e2e-live-${RUN}`;
  const call = liveCall(sessionId, [`Ada ${RUN}`, `Grace ${RUN}`]);
  const o: CallEventOptions = { ctx: { appId: app.appId, region: app.region as "us", webhook: "wh-callboard" }, millis: false };

  await signIn(page, state.admin);
  await page.goto("/live?recent=15");
  await expect(page.getByRole("heading", { level: 1, name: "Live now" })).toBeVisible();
  const card = page.locator(`[data-testid="live-sessions"] li[data-session-id="${sessionId}"]`);
  await expect(card).toHaveCount(0);
  const before = page.url();

  // Ringing, then started with the first person in it.
  let report = await deliver(app.appId, [callInitiated(call, o), callStarted(call, o), participantJoined(call, call.participants[0], o)]);
  expect(report.byStatus).toEqual({ "200": 3 });
  await expect(card).toBeVisible({ timeout: 15_000 });
  await expect(card.locator(`tr[data-occupant="Ada ${RUN}"]`)).toBeVisible();
  await expect(card).toHaveAttribute("data-status", "ongoing");

  // The second person joins: the same card gains a row, no reload.
  report = await deliver(app.appId, [participantJoined(call, call.participants[1], o)]);
  expect(report.ok).toBe(1);
  await expect(card.locator(`tr[data-occupant="Grace ${RUN}"]`)).toBeVisible({ timeout: 15_000 });
  await expect(card.locator(`tr[data-occupant="Grace ${RUN}"]`)).toContainText("still in");

  // Both leave and the call ends: it leaves "Going on now" for "Ended recently".
  const ended = { ...call, status: "ended" as const, endedAt: Math.floor(Date.now() / 1000) };
  ended.participants = call.participants.map((p) => ({ ...p, leftAt: ended.endedAt }));
  report = await deliver(app.appId, [participantLeft(ended, ended.participants[0], o), participantLeft(ended, ended.participants[1], o), callEnded(ended, o)]);
  expect(report.ok).toBe(3);
  await expect(card).toHaveCount(0, { timeout: 15_000 });
  await expect(page.locator(`[data-testid="live-ended"] li[data-session-id="${sessionId}"]`)).toHaveAttribute("data-status", "ended");
  // It was all the page's own polling.
  expect(page.url()).toBe(before);
});

test("a viewer sees only the live calls of their apps", async ({ page, request }) => {
  const state = demoState();
  const other = state.emulator.apps.find((a) => !state.viewer.apps.includes(a.appId));
  await signIn(page, state.viewer);
  await page.goto("/live");
  await expect(page.getByRole("heading", { level: 1, name: "Live now" })).toBeVisible();
  const res = await request.get("/api/v1/live", { headers: { cookie: await cookieHeader(page) } });
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { data: Array<{ appId: string }> };
  for (const s of body.data) expect(state.viewer.apps).toContain(s.appId);
  if (other) {
    const refused = await request.get(`/api/v1/live?app=${other.appId}`, { headers: { cookie: await cookieHeader(page) } });
    expect(refused.status()).toBe(404);
    await page.goto(`/live?app=${other.appId}`);
    await expect(page.locator("main p.alert")).toContainText("not found");
  }
  // The app picker offers only the viewer's apps.
  await page.goto("/live");
  const options = await page.getByTestId("app-picker").locator('input[name="app"]').evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
  expect(options.length).toBeGreaterThan(0);
  for (const o of options) expect(state.viewer.apps).toContain(o);
});

test("the live API refuses bad input and anonymous callers", async ({ request }) => {
  expect((await request.get("/api/v1/live")).status()).toBe(401);
});
