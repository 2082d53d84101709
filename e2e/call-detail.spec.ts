/**
 * A call's page counts people, not rows: a uid who rejoined (or joined from a second
 * device) is one person with two sessions, in the table, the timeline and the minutes
 * chart, and the platform's own count is shown beside it where the two differ.
 */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { ADMIN_STATE } from "./storage";

test.use({ storageState: ADMIN_STATE });

interface Participant { uid: string; joinedAt: number | null }
interface Detail { app: string; sessionId: string; totalParticipants: number; participants: Participant[] }

/** A call of the demo in which some uid is listed twice. */
async function callWithRejoin(request: APIRequestContext): Promise<{ call: Detail; uid: string }> {
  const list = (await (await request.get("/api/v1/calls?perPage=200&sort=participants")).json()) as { data: Array<{ app: string; sessionId: string }> };
  for (const c of list.data) {
    const { data } = (await (await request.get(`/api/v1/calls/${encodeURIComponent(c.sessionId)}?app=${c.app}`)).json()) as { data: Detail };
    const seen = new Set<string>();
    for (const p of data.participants) {
      if (seen.has(p.uid) && data.participants.filter((q) => q.uid === p.uid && q.joinedAt !== null).length > 1) return { call: data, uid: p.uid };
      seen.add(p.uid);
    }
  }
  throw new Error("no call with a rejoin in the demo data");
}

test("a rejoining participant is one person with two sessions", async ({ page }) => {
  const { call, uid } = await callWithRejoin(page.request);
  const people = new Set(call.participants.map((p) => p.uid));
  const sessions = call.participants.filter((p) => p.uid === uid);
  expect(people.size).toBeLessThan(call.participants.length);

  await page.goto(`/calls/${encodeURIComponent(call.sessionId)}?app=${call.app}`);
  const panel = page.getByTestId("panel-participants");
  await expect(panel.getByRole("heading", { level: 2 })).toHaveText(`Participants (${people.size})`);
  await expect(panel.locator("tbody[data-person]")).toHaveCount(people.size);
  const person = panel.locator(`tbody[data-person="${uid}"]`);
  await expect(person).toHaveAttribute("data-sessions", String(sessions.length));
  await expect(person.locator("tr.session-row")).toHaveCount(sessions.length);
  await expect(person.locator(".session-badge")).toHaveText(`${sessions.length} sessions`);

  // The platform's count, where it differs from the people who joined.
  const joined = new Set(call.participants.filter((p) => p.joinedAt !== null).map((p) => p.uid)).size;
  if (call.totalParticipants !== joined) await expect(page.getByTestId("platform-count")).toContainText(String(call.totalParticipants));
  else await expect(page.getByTestId("platform-count")).toHaveCount(0);

  // The timeline: one row per person, the rejoin a second bar on the same row.
  const timeline = page.getByTestId("timeline");
  await expect(timeline.locator(".timeline-row")).toHaveCount(people.size);
  await expect(timeline.locator(`.timeline-row[data-uid="${uid}"] .timeline-bar`)).toHaveCount(sessions.length);

  // The minutes chart: one bar label per person.
  const names = async () => (await page.getByTestId("panel-minutes").locator("text.recharts-cartesian-axis-tick-value").allTextContents()).filter((l) => people.has(l));
  await expect.poll(async () => (await names()).length).toBe(people.size);
  expect(new Set(await names()).size).toBe(people.size);
});
