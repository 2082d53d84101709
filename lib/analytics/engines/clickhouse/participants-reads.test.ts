import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type Scope } from "@/lib/analytics";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { createClickHouseEngine } from "./engine";

process.env.AUTH_SECRET ??= "participants-reads-secret-at-least-32-chars!!";

/**
 * The participants reports as signed sums of participant rows (decision 0034,
 * "Participants as signed sums"): filtered by the call dimensions participant rows carry
 * (type, mode, status, receiver type, participant count), no statement reads the calls or
 * looks cancel rows up by state; hasRecording, uid and weekday/hour still look the calls
 * up. Unfiltered, or filtered by app, time and person only, the sums come from
participants_by_month for the whole months of the range and from the rows for its edges
(session 17); filtered by type, mode, status or receiver type, from participants_by_month_dims
the same way (session 18). Same answers: the parity suite (parity.integration.test.ts), and below
against the in-memory engine over the fixture.
 */

/** 2025-10-09: the fixture's 120 days hold November, December and January whole. */
const BASE = 1_760_000_000;
const d = (iso: string) => Date.parse(iso) / 1000;

const PARTICIPANT_REPORTS = ["participants", "participants-combined", "engagement"] as const;

describe("ClickHouse engine: participants read from participant rows alone (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let recording: ClickHouse;

  beforeAll(async () => {
    db = openFixtureDb("ch-participants-reads");
    const r = rng(11);
    writeCalls(db, Array.from({ length: 300 }, (_, i) => randomCall(r, i, BASE, 120 * 86_400)));
    // A participant of two calls only, in December and January: first / last call inside the range, not at its ends.
    const rare = [d("2025-12-10T08:00:00Z"), d("2026-01-05T08:00:00Z")].map((at, i) => {
      const c = randomCall(r, 1000 + i, at, 60);
      return { ...c, appPk: 1, participants: c.participants.map((p) => ({ ...p, uid: "rare-one" })) };
    });
    writeCalls(db, rare);
    chdb = openChdb("participants_reads");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    recording = {
      ...chdb,
      rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)),
      stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)),
    };
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  const sentFor = async (f: ReturnType<typeof filters>) => {
    const engine = createClickHouseEngine({ db: () => db, ch: recording });
    const scope: Scope = { appPks: "all" };
    sent.length = 0;
    const answers: string[] = [];
    for (const name of PARTICIPANT_REPORTS) {
      answers.push(JSON.stringify(await engine.report(name, f, scope)));
      for await (const batch of await engine.csv(name, f, scope)) answers.push(JSON.stringify(batch));
    }
    answers.push(JSON.stringify(await engine.report("apps", f, scope)));
    return { queries: sent.filter((q) => q.includes("participants_v2")), answers };
  };

  it("reads no calls and no state keys for the dimensions the rows carry", async () => {
    const { queries, answers } = await sentFor(filters({ type: "video", mode: "meet", status: "ended", receiverType: "group", participantsCount: 3 }));
    expect(queries.length).toBeGreaterThan(5);
    for (const q of queries) {
      expect(q, "no lookup of the calls").not.toMatch(/calls_v2/);
      expect(q, "no call-state keys").not.toMatch(/version \* 1000003/);
    }
    // Something was counted: the filters match calls of the fixture.
    expect(answers.join("")).toMatch(/"calls":[1-9]/);
  });

  it("still looks the calls up for what the rows do not carry", async () => {
    for (const f of [filters({ hasRecording: true }), filters({ uid: "alice" }), filters({ weekday: 1, hour: 9 })]) {
      const { queries } = await sentFor(f);
      expect(queries.some((q) => /participants_v2[\s\S]*calls_v2/.test(q)), JSON.stringify(f)).toBe(true);
    }
  });

  /** The statements that sum participants for a count, a page choice, the engagement buckets or the apps report (not a page's rows or the CSV: those read first / last call from the rows). */
  const sumStatements = (queries: string[]) => queries.filter((q) => /count\(\) AS n|AS participants|sum\(c\) AS calls/.test(q));

  it("reads participants_by_month alone for all time, and for whole months with the rows only at the edges", async () => {
    const allTime = (await sentFor(filters({})));
    const months = sent.filter((q) => q.includes("participants_by_month"));
    expect(months.length, "all time reads the pre-aggregate").toBeGreaterThan(0);
    expect(allTime.answers.join("")).toMatch(/"calls":[1-9]/);
    const engine = createClickHouseEngine({ db: () => db, ch: recording });
    sent.length = 0;
    await engine.report("participants", filters({}), { appPks: "all" });
    await engine.report("engagement", filters({ apps: ["app-two"] }), { appPks: "all" });
    for (const q of sumStatements(sent)) {
      expect(q, "all time: the pre-aggregate").toMatch(/participants_by_month/);
      expect(q, "all time: no participant row").not.toMatch(/participants_v2/);
    }
    // The page's first / last call: a day of its participants' first and last months, then those months whole for whom the day did not answer.
    const firstLast = sent.filter((q) => q.includes("firstCallAt"));
    expect(firstLast.length).toBeGreaterThanOrEqual(1);
    expect(firstLast.length).toBeLessThanOrEqual(2);
    expect(firstLast[0]).toMatch(/start_at >= toDateTime\(\d+\) AND start_at < toDateTime\(\d+\)/);
    if (firstLast[1]) expect(firstLast[1]).toMatch(/start_at >= toDateTime\(toDate\('\d{4}-\d\d-01'\)\)/);
    expect(sent.some((q) => q.includes("calls_by_bucket") && q.includes("min(bucket)")), "the months' first and last buckets with calls").toBe(true);
    // A range with whole months and two edges: the pre-aggregate for the months, the rows bounded to the edges.
    sent.length = 0;
    await engine.report("participants", filters({ from: d("2025-10-20T00:00:00Z"), to: d("2026-01-20T00:00:00Z") }), { appPks: "all" });
    const ranged = sumStatements(sent);
    expect(ranged.length).toBeGreaterThan(0);
    for (const q of ranged) expect(q).toMatch(/participants_by_month[\s\S]*UNION ALL[\s\S]*participants_v2[\s\S]*start_at < toDateTime\(addMonths/);
    // A participant count: the rows alone (no pre-aggregate keeps it).
    sent.length = 0;
    await engine.report("participants", filters({ type: "video", participantsCount: 3 }), { appPks: "all" });
    for (const q of sumStatements(sent)) expect(q).not.toMatch(/participants_by_month/);
  });

  it("reads participants_by_month_dims for a filter on the call's closed sets: all time alone, a range's whole months with the rows at the edges", async () => {
    const engine = createClickHouseEngine({ db: () => db, ch: recording });
    sent.length = 0;
    await engine.report("participants", filters({ type: "video", receiverType: "group" }), { appPks: "all" });
    await engine.report("engagement", filters({ type: "video", status: "ended" }), { appPks: "all" });
    await engine.report("apps", filters({ mode: "meet" }), { appPks: "all" });
    // (The apps report's calls come from calls_by_month: only the statements over participants.)
    const allTime = sumStatements(sent).filter((q) => q.includes("uid_code"));
    expect(allTime.length).toBeGreaterThan(3);
    for (const q of allTime) {
      expect(q, "all time: the dims pre-aggregate").toMatch(/participants_by_month_dims/);
      expect(q, "all time: no participant row").not.toMatch(/participants_v2/);
    }
    expect(sent.find((q) => q.includes("firstCallAt")), "first / last call: a day of the first and last months").toMatch(/start_at >= toDateTime\(\d+\) AND start_at < toDateTime\(\d+\)/);
    sent.length = 0;
    await engine.report("participants", filters({ type: "audio", from: d("2025-10-20T00:00:00Z"), to: d("2026-01-20T00:00:00Z") }), { appPks: "all" });
    const ranged = sumStatements(sent);
    expect(ranged.length).toBeGreaterThan(0);
    for (const q of ranged) expect(q).toMatch(/participants_by_month_dims[\s\S]*UNION ALL[\s\S]*participants_v2[\s\S]*start_at < toDateTime\(addMonths/);
  });

  it("gives the in-memory engine's answers from the pre-aggregate, in any zone", { timeout: 120_000 }, async () => {
    const engine = createClickHouseEngine({ db: () => db, ch: chdb });
    const mem = createMemoryEngine({ db: () => db });
    const scope: Scope = { appPks: "all" };
    const cases = [
      {},
      { apps: ["app-two"] },
      { person: "A" },
      { from: d("2025-10-20T00:00:00Z"), to: d("2026-01-20T00:00:00Z") },
      // Local months in +05:45 and +05:30: no UTC month is whole in them, the edges are a day wide.
      { from: d("2025-11-30T18:15:00Z"), to: d("2026-01-31T18:15:00Z"), tz: "Asia/Kathmandu" },
      { from: d("2025-11-30T18:30:00Z"), to: d("2025-12-31T18:30:00Z"), tz: "Asia/Kolkata", sort: "minutes" as const },
      { from: d("2025-12-01T00:00:00Z"), order: "asc" as const },
      { to: d("2025-12-01T00:00:00Z"), sort: "minutes" as const, order: "asc" as const },
      // The fewest calls first: "rare-one" on the first page, its first and last call read from its own months.
      { order: "asc" as const },
      { from: d("2025-11-15T00:00:00Z"), to: d("2026-01-25T00:00:00Z"), order: "asc" as const },
      // The call's closed sets: participants_by_month_dims (migration 0012).
      { type: "video" as const, receiverType: "group" as const },
      { type: "video" as const, status: "ended" as const, sort: "minutes" as const },
      { mode: "call" as const, order: "asc" as const },
      { type: "audio" as const, from: d("2025-10-20T00:00:00Z"), to: d("2026-01-20T00:00:00Z") },
      { status: "ended" as const, from: d("2025-11-30T18:15:00Z"), to: d("2026-01-31T18:15:00Z"), tz: "Asia/Kathmandu", sort: "minutes" as const },
    ];
    const firstPage = await engine.report("participants", filters({ order: "asc", perPage: 5 }), scope);
    expect(firstPage.data.find((p) => p.uid === "rare-one")).toMatchObject({ firstCallAt: expect.any(Number), calls: 2 });
    for (const c of cases) {
      for (const page of [1, 2]) {
        const f = filters({ ...c, page, perPage: 5 });
        for (const name of PARTICIPANT_REPORTS) expect(await engine.report(name, f, scope), `${name} ${JSON.stringify(c)} page ${page}`).toEqual(await mem.report(name, f, scope));
        expect(await engine.report("apps", f, scope), `apps ${JSON.stringify(c)}`).toEqual(await mem.report("apps", f, scope));
      }
    }
  });
});
