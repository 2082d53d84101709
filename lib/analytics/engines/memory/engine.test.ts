import { afterAll, describe, expect, it } from "vitest";
import { csvStream } from "@/lib/export/csv";
import { HttpError } from "@/lib/http/errors";
import { PARTICIPANT_COLUMNS } from "../../csv-columns";
import { filters, type Filters } from "../../filters";
import { REPORT_CSV_WRITERS as TABLE, type ReportName, type ReportRow } from "../../report-csv-writers";
import { openFixtureDb, randomCall, rng, writeCalls } from "../../test-fixtures";
import * as A from "./direct";
import { createMemoryEngine } from "./engine";
import { REPORT_ANSWERERS } from "./report-answerers";

/**
 * The memory engine through the interface (what routes, pages, statements and alerts
 * call) answers exactly what its report functions compute directly, writes the CSV bytes
 * the report rows give, and says who it is and whether it is ready.
 */
const db = openFixtureDb("memory-engine");
const r = rng(41);
const base = Date.UTC(2025, 2, 1) / 1000;
writeCalls(db, Array.from({ length: 1200 }, (_, i) => randomCall(r, i, base, 40 * 86_400)));
db.$client.exec("INSERT INTO recordings (app_pk, session_id, recording_url, duration, start_time, received_ms) SELECT app_pk, session_id, 'https://rec.example/' || pk, 12.3456, start_at, 0 FROM calls WHERE pk % 9 = 0");
afterAll(() => db.$client.close());

const ALL = { appPks: "all" as const };
const engine = createMemoryEngine({ db: () => db });
const NAMES = Object.keys(REPORT_ANSWERERS) as ReportName[];
const CASES: Filters[] = [
  filters(), filters({ tz: "Asia/Kolkata", from: base + 3 * 86_400, to: base + 20 * 86_400 }), filters({ type: "video", status: "ended", sort: "minutes" }),
  filters({ apps: ["app-two"], uid: "alice", order: "asc" }), filters({ participantsCount: 2, tz: "Europe/Berlin", page: 2, perPage: 7 }),
];
const text = (s: ReadableStream<Uint8Array>) => new Response(s).text();
const directRows = <N extends ReportName>(name: N, f: Filters): ReportRow<N>[] => Array.from(REPORT_ANSWERERS[name].csv.rows(db, f, ALL));

describe("memory engine", () => {
  it("answers every report's JSON as its report function does", async () => {
    for (const f of CASES) for (const name of NAMES) expect(await engine.report(name, f, ALL), `${name} ${JSON.stringify(f)}`).toEqual(REPORT_ANSWERERS[name].json(db, f, ALL));
  });

  it("streams every report's CSV rows (the calls list: its raw rows), written in the bytes of those rows", async () => {
    for (const f of CASES) {
      for (const name of NAMES.filter((n) => n !== "calls")) {
        const got: unknown[] = [];
        for await (const batch of await engine.csv(name, f, ALL)) got.push(...(typeof batch === "string" || batch instanceof Uint8Array ? [batch] : batch));
        expect(got, `${name} ${JSON.stringify(f)}`).toEqual(directRows(name, f));
      }
      const participants = await text(TABLE.participants.csv.stream(await engine.csv("participants", f, ALL)));
      expect(participants).toBe(await text(csvStream(Array.from(REPORT_ANSWERERS.participants.csv.rows(db, f, ALL)), PARTICIPANT_COLUMNS)));
      const calls = await text(TABLE.calls.csv.stream(await engine.csv("calls", f, ALL)));
      expect(calls.split("\r\n").length - 2, JSON.stringify(f)).toBe(A.getCalls(db, { ...f, page: 1 }, ALL).meta.pagination.total);
    }
  });

  it("gives one call's detail, and 404 for an app out of scope, before any CSV byte", async () => {
    const [app, sessionId] = db.$client.prepare("SELECT a.app_id, c.session_id FROM calls c JOIN apps a ON a.pk = c.app_pk LIMIT 1").raw().get() as [string, string];
    expect(await engine.call({ app, sessionId }, ALL)).toEqual(A.getCall(db, { app, sessionId }, ALL));
    const other = { appPks: [999] };
    await expect(engine.call({ app, sessionId }, other)).rejects.toSatisfy((e) => e instanceof HttpError && e.status === 404);
    await expect(engine.report("totals", filters({ apps: [app] }), other)).rejects.toSatisfy((e) => e instanceof HttpError && e.status === 404);
    await expect(engine.csv("calls", filters({ apps: ["nope"] }), ALL)).rejects.toSatisfy((e) => e instanceof HttpError && e.status === 404);
    await expect(engine.csv("participants", filters({ apps: ["nope"] }), ALL)).rejects.toSatisfy((e) => e instanceof HttpError && e.status === 404);
  });

  it("says it is the memory engine, ready with its store, and names no secret", async () => {
    expect(engine.kind).toBe("memory");
    const calls = db.$client.prepare("SELECT count(*) FROM calls").pluck().get() as number;
    const empty = openFixtureDb("memory-engine-empty");
    // A health check never loads the store (it must answer at once): not loaded yet, starting.
    expect(await createMemoryEngine({ db: () => empty }).health()).toMatchObject({ engine: "memory", status: "starting" });
    empty.$client.close();
    expect((await engine.ready())?.calls).toBe(calls);
    const health = await engine.health();
    expect(health).toMatchObject({ engine: "memory", status: "ok" });
    expect(health.detail).toContain(`${calls} calls`);
    await engine.close();
  });
});
