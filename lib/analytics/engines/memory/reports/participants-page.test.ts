import { afterAll, describe, expect, it } from "vitest";
import * as A from "../direct";
import { firstInOrder, getParticipantPage } from "./usage";
import { FIXTURE_UIDS, openFixtureDb, randomCall, rng, writeCalls } from "../../../test-fixtures";

/**
 * The participants report's JSON page (usage.ts getParticipantPage) builds only the
 * page's rows, from one pass that keeps the best ones: it must equal the page of the
 * whole list sorted as the CSV sorts it (rows sorted, reversed for `asc`, sliced) — by
 * calls and by minutes, both directions, first, middle and last pages — over thousands
 * of uids, many with equal calls and minutes.
 */
const ALL = { appPks: "all" as const };

describe("participants page", () => {
  const db = openFixtureDb("participants-page");
  afterAll(() => db.$client.close());
  const r = rng(404);
  const base = Date.UTC(2025, 0, 1) / 1000;
  const calls = Array.from({ length: 4000 }, (_, i) => {
    const c = randomCall(r, i, base, 60 * 86_400);
    // Mostly light users (a few calls each), a few heavy ones, and the fixtures' odd uids.
    for (const p of c.participants) p.uid = r() < 0.1 ? FIXTURE_UIDS[Math.floor(r() * FIXTURE_UIDS.length)]! : r() < 0.2 ? `heavy-${Math.floor(r() * 20)}` : `light-${Math.floor(r() * 6000)}`;
    return c;
  });
  writeCalls(db, calls);

  /** The page as the whole list gives it (what the route answered before). */
  function reference(f: A.Filters) {
    const rows = A.getParticipantUsage(db, f, ALL);
    // Minutes, then the report's own order (calls, app pk, uid bytes: getParticipantUsage's), kept by the stable sort.
    if (f.sort === "minutes") rows.sort((a, b) => b.totalMinutes - a.totalMinutes);
    if (f.order === "asc") rows.reverse();
    return { rows: rows.slice((f.page - 1) * f.perPage, f.page * f.perPage), total: rows.length };
  }

  it("equals the page of the whole sorted list", () => {
    const total = A.getParticipantUsage(db, A.filters(), ALL).length;
    expect(total).toBeGreaterThan(3000);
    for (const sort of [undefined, "minutes"] as const) {
      for (const order of ["desc", "asc"] as const) {
        for (const [page, perPage] of [[1, 50], [2, 50], [7, 25], [1, 1000], [3, 1000], [Math.ceil(total / 50), 50], [Math.ceil(total / 50) + 1, 50]]) {
          for (const more of [{}, { type: "video" as const, receiverType: "group" as const }, { apps: ["app-two"] }]) {
            const f = A.filters({ ...more, page, perPage, order, ...(sort ? { sort } : {}) });
            expect(getParticipantPage(db, f, ALL), JSON.stringify(f)).toEqual(reference(f));
          }
        }
      }
    }
  });

  it("person: only the uids containing the text (either case), with the same sums as without the search", () => {
    const everyone = A.getParticipantUsage(db, A.filters({ apps: ["app-two"] }), ALL);
    const found = A.getParticipantUsage(db, A.filters({ apps: ["app-two"], person: "HEAVY-1" }), ALL);
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(everyone.filter((r) => r.uid.startsWith("heavy-1")));
    // The page and its total count only the found rows; a uid filter keeps its calls, the search the person.
    const page = getParticipantPage(db, A.filters({ person: "heavy-1", perPage: 5, sort: "minutes" }), ALL);
    expect(page.total).toBe(A.getParticipantUsage(db, A.filters({ person: "heavy-1" }), ALL).length);
    expect(page.rows.every((r) => r.uid.startsWith("heavy-1"))).toBe(true);
    const inCalls = A.getParticipantUsage(db, A.filters({ uid: "heavy-3" }), ALL);
    expect(inCalls.length).toBeGreaterThan(1);
    expect(A.getParticipantUsage(db, A.filters({ uid: "heavy-3", person: "heavy-3" }), ALL).map((r) => r.uid)).toEqual(inCalls.filter((r) => r.uid === "heavy-3").map((r) => r.uid));
  });

  it("firstInOrder keeps the first k of a total order, with ties broken by the order itself", () => {
    const g = rng(9);
    const keyOf = Array.from({ length: 20_000 }, () => Math.floor(g() * 30));
    const ids = Int32Array.from(keyOf.map((_, i) => i).sort(() => g() - 0.5));
    const cmp = (a: number, b: number) => keyOf[a]! - keyOf[b]! || b - a;
    const sorted = Array.from(ids).sort(cmp);
    for (const k of [0, 1, 7, 100, 2_499, 2_500, 20_000, 30_000]) expect(firstInOrder(ids, k, cmp), String(k)).toEqual(sorted.slice(0, k));
  });
});
