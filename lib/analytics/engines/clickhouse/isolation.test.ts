import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type Scope } from "@/lib/analytics";
import { REPORT_CSV_WRITERS, type ReportName } from "@/lib/analytics/report-csv-writers";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { createClickHouseEngine } from "./engine";

process.env.AUTH_SECRET ??= "isolation-test-secret-at-least-32-chars!!";

/**
 * Viewer isolation is enforced inside every query: each statement the engine sends for a
 * viewer names, at every read of a fact table, the viewer's apps and no other — whatever
 * the filters (a uid, a recording filter with its subqueries, a time window).
 */

/** Every report of the table (a report added later is checked without a change here). */
const REPORT_NAMES = Object.keys(REPORT_CSV_WRITERS) as ReportName[];
const FACT_READ = /FROM `isolation`\.`(calls|calls_v2|participants_v2|uids|call_raw|recordings|event_counts|webhook_deliveries|client_sessions|calls_by_month|calls_by_bucket|participants_by_month_dims|participants_by_month|concurrency_by_quarter)(_local)?`/g;

describe("ClickHouse engine: viewer isolation inside every query (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let recording: ClickHouse;

  beforeAll(async () => {
    db = openFixtureDb("ch-isolation");
    const r = rng(9);
    writeCalls(db, Array.from({ length: 300 }, (_, i) => randomCall(r, i, 1_760_000_000, 30 * 86_400)));
    const rec = db.$client.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, start_time, received_ms) SELECT app_pk, session_id, 'https://r/' || pk, start_at, 1 FROM calls WHERE pk % 5 = 0");
    rec.run();
    chdb = openChdb("isolation");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    recording = {
      ...chdb,
      rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)),
      stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)),
      streamRowBinary: (q, signal) => (sent.push(q), chdb.streamRowBinary(q, signal)),
    };
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  // Every report and CSV under three filter sets: ~20 s on a quiet box, more on a shared one.
  it("names the viewer's app, and only it, at every read of a fact table", { timeout: 120_000 }, async () => {
    const viewer: Scope = { appPks: [2] };
    const engine = createClickHouseEngine({ db: () => db, ch: recording });
    const cases = [filters({}), filters({ uid: "alice", hasRecording: true, from: 1_760_000_000, to: 1_761_000_000 }), filters({ hasRecording: false, type: "video" })];
    for (const f of cases) {
      for (const name of REPORT_NAMES) {
        const answer = JSON.stringify(await engine.report(name, f, viewer));
        expect(answer).not.toMatch(/"app":"app-(one|three)"/);
        for await (const _ of await engine.csv(name, f, viewer)) void _;
      }
    }
    const session = db.$client.prepare("SELECT session_id FROM calls WHERE app_pk = 2 LIMIT 1").pluck().get() as string;
    await engine.call({ app: "app-two", sessionId: session }, viewer);
    expect(sent.length).toBeGreaterThan(50);
    for (const q of sent) {
      const reads = q.match(FACT_READ)?.length ?? 0;
      const restricted = (q.match(/app_pk IN \(2\)|app_pk = 2 |\(app_pk, session_id\) IN \(\(2, /g) ?? []).length;
      expect(reads, q).toBeGreaterThan(0);
      expect(restricted, `every read of a fact table restricted to the viewer's app:\n${q}`).toBeGreaterThanOrEqual(reads);
      expect(q, "no other app's pk").not.toMatch(/app_pk IN \([^)]*\b[13]\b|app_pk = [13]\b/);
    }
  });
});
