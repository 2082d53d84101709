import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingGenerated } from "@/lib/ingest/test-deliveries";
import { postJson, startHarness, type Harness } from "@/lib/ingest/test-harness";
import { filters, type Filters } from "../../../filters";
import { participantsCountOf, randomCall, rng, startOf, writeCalls, type FixtureCall } from "../../../test-fixtures";
import { REPORT_ANSWERERS } from "../report-answerers";
import { handleReport } from "../test-route";
import { getAwaitingRecordings, getRecordingSummary, withRecordingFacts } from "./recording-status";

/**
 * The recording facts against an oracle in plain TypeScript: calls written as the sync
 * writes them (the platform's flag), links delivered through the real webhook ingest
 * (which also marks a linked call as recorded), and links for calls never synced.
 */
let h: Harness;
const calls: FixtureCall[] = [];
/** Links delivered per (app pk, session). */
const links = new Map<string, number>();
const orphans: Array<{ appPk: number; start: number }> = [];
const ALL = { appPks: "all" as const };
const BASE = 1_767_225_600;
const key = (appPk: number, sessionId: string) => `${appPk}/${sessionId}`;

beforeAll(async () => {
  h = await startHarness();
  const appIdOf = (pk: number) => (pk === h.appPk.acme ? "acme" : "open-app");
  const r = rng(14);
  for (let i = 0; i < 600; i++) {
    const c = randomCall(r, i, BASE, 30 * 86_400);
    // Links are delivered to the two apps whose webhook is on.
    c.appPk = r() < 0.5 ? h.appPk.acme : h.appPk.open;
    calls.push(c);
  }
  writeCalls(h.db, calls);
  for (const c of calls) {
    const p = c.hasRecording ? 0.4 : 0.08;
    if (r() >= p) continue;
    const n = r() < 0.2 ? 2 : 1;
    for (let k = 0; k < n; k++) expect((await postJson(h.baseUrl, appIdOf(c.appPk), recordingGenerated({ appId: appIdOf(c.appPk) }, c.sessionId, startOf(c) + k))).status).toBe(200);
    links.set(key(c.appPk, c.sessionId), n);
  }
  for (let i = 0; i < 7; i++) {
    const start = BASE + Math.floor(r() * 30 * 86_400);
    expect((await postJson(h.baseUrl, "acme", recordingGenerated({ appId: "acme" }, `unsynced-${i}`, start))).status).toBe(200);
    orphans.push({ appPk: h.appPk.acme, start });
  }
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** What the warehouse's has_recording holds: the flag, or a link received. */
const recorded = (c: FixtureCall) => c.hasRecording || links.has(key(c.appPk, c.sessionId));

function matches(c: FixtureCall, f: Filters): boolean {
  const pk = (app: string) => (app === "acme" ? h.appPk.acme : h.appPk.open);
  const start = startOf(c);
  return (f.apps.length === 0 || f.apps.map(pk).includes(c.appPk)) && (!f.type || c.type === f.type) && (!f.status || c.status === f.status) &&
    (f.hasRecording === undefined || recorded(c) === f.hasRecording) && (f.uid === undefined || c.participants.some((p) => p.uid === f.uid)) &&
    (f.participantsCount === undefined || participantsCountOf(c) === f.participantsCount) &&
    (f.from === undefined || start >= f.from) && (f.to === undefined || start < f.to);
}

const CASES: Array<Partial<Filters>> = [
  {},
  { apps: ["acme"] },
  { from: BASE + 5 * 86_400, to: BASE + 12 * 86_400 },
  { type: "video", status: "ended" },
  { hasRecording: true },
  { hasRecording: false },
  { uid: "alice" },
  { apps: ["open-app"], participantsCount: 2 },
];

describe("recording facts", () => {
  it("the summary: flagged, linked, awaiting, linked but not flagged, links, links of unsynced calls", () => {
    expect(links.size).toBeGreaterThan(30);
    for (const partial of CASES) {
      const f = filters(partial);
      const mine = calls.filter((c) => matches(c, f));
      const linked = mine.filter((c) => links.has(key(c.appPk, c.sessionId)));
      const callFilters = ["type", "status", "hasRecording", "uid", "participantsCount"].some((k) => k in partial);
      const expected = {
        flagged: mine.filter((c) => c.hasRecording).length,
        withLink: linked.length,
        awaiting: mine.filter((c) => c.hasRecording && !links.has(key(c.appPk, c.sessionId))).length,
        linkNotFlagged: linked.filter((c) => !c.hasRecording).length,
        links: linked.reduce((n, c) => n + links.get(key(c.appPk, c.sessionId))!, 0),
        linksForUnsyncedCalls: callFilters || (f.apps.length > 0 && !f.apps.includes("acme"))
          ? 0
          : orphans.filter((o) => (f.from === undefined || o.start >= f.from) && (f.to === undefined || o.start < f.to)).length,
      };
      expect(getRecordingSummary(h.db, f, ALL), JSON.stringify(partial)).toEqual(expected);
    }
  });

  it("lists flagged calls awaiting their link, newest first, paged", () => {
    for (const partial of CASES) {
      const f = filters({ ...partial, perPage: 17 });
      const expected = calls
        .map((c, i) => ({ c, i }))
        .filter(({ c }) => matches(c, f) && c.hasRecording && !links.has(key(c.appPk, c.sessionId)))
        .sort((a, b) => startOf(b.c) - startOf(a.c) || b.i - a.i)
        .map(({ c }) => c.sessionId);
      const seen: string[] = [];
      for (let page = 1; page <= Math.max(1, Math.ceil(expected.length / 17)); page++) {
        const p = getAwaitingRecordings(h.db, { ...f, page }, ALL);
        expect(p.meta.pagination.total).toBe(expected.length);
        seen.push(...p.data.map((r) => r.sessionId));
      }
      expect(seen, JSON.stringify(partial)).toEqual(expected);
    }
  });

  it("gives each row of the calls list both facts, and the API the same", async () => {
    const sample = calls.slice(0, 40).map((c) => ({ app: c.appPk === h.appPk.acme ? "acme" : "open-app", sessionId: c.sessionId }));
    const page = withRecordingFacts(h.db, { data: sample, meta: { pagination: { total: 40, count: 40, per_page: 40, current_page: 1, total_pages: 1 } } }, ALL);
    page.data.forEach((row, i) => {
      const c = calls[i];
      expect(row.recording).toEqual({ flagged: c.hasRecording, links: links.get(key(c.appPk, c.sessionId)) ?? 0 });
    });
    // The routes: JSON and CSV of the same filters agree with the functions.
    const deps = { db: () => h.db, authorize: async () => ({ userId: 1, email: "a@b.c", role: "admin" as const, appPks: "all" as const }) };
    const json = await (await handleReport(new Request("http://x/api/v1/recordings/summary?app=acme"), REPORT_ANSWERERS["recording-summary"], deps)).json();
    expect(json).toEqual({ data: getRecordingSummary(h.db, filters({ apps: ["acme"] }), ALL) });
    const csv = await (await handleReport(new Request("http://x/api/v1/recordings/awaiting?app=acme&format=csv"), REPORT_ANSWERERS["recordings-awaiting"], deps)).text();
    const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.sessionId)).toEqual(getAwaitingRecordings(h.db, filters({ apps: ["acme"], perPage: 1000 }), ALL).data.map((r) => r.sessionId));
  });
});
