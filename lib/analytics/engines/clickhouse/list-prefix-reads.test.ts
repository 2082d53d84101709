import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type AnalyticsEngine, type Filters, type Scope } from "@/lib/analytics";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { createClickHouseEngine } from "./engine";

process.env.AUTH_SECRET ??= "list-prefix-reads-secret-at-least-32-chars!!";

/**
 * The calls list and the recordings list read a prefix of their order (decision 0034, "The
 * calls list and the recordings list read a prefix of their order (session 18)"): which
 * statements they send, and the in-memory engine's pages — first, middle, last and past the
 * end, every sort and order, ties in the sort keys, recordings stored several times and not
 * merged. The parity suite (parity.integration.test.ts) compares them on two 18.16 shards too.
 */

const BASE = 1_760_000_000;
const SCOPE: Scope = { appPks: "all" };

const CALLS = (() => {
  const r = rng(23);
  return Array.from({ length: 600 }, (_, i) => randomCall(r, i, BASE, 90 * 86_400));
})();
const startOf = (i: number) => CALLS[i].startedAt ?? CALLS[i].initiatedAt;

describe("ClickHouse engine: the calls and recordings lists read a prefix of their order (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let clickhouse: AnalyticsEngine;
  let memory: AnalyticsEngine;

  beforeAll(async () => {
    db = openFixtureDb("ch-list-prefix-reads");
    writeCalls(db, CALLS);
    const rec = db.$client.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms) VALUES (?, ?, ?, NULL, NULL, ?, ?)");
    const linked = db.$client.prepare("UPDATE calls SET has_recording = 1 WHERE app_pk = ? AND session_id = ?");
    CALLS.forEach((c, i) => {
      if (i % 3 !== 0) return;
      linked.run(c.appPk, c.sessionId);
      // Several recordings share a time (ties broken by arrival, app, session, URL).
      rec.run(c.appPk, c.sessionId, `https://rec.example/${i}/a`, BASE + 86_400 * (i % 40), (BASE + 60) * 1000);
      if (i % 2 === 0) rec.run(c.appPk, c.sessionId, `https://rec.example/${i}/b`, i % 4 === 0 ? null : startOf(i) + 600, (startOf(i) + 700) * 1000);
    });
    chdb = openChdb("list_prefix_reads");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    // Every recording delivered twice more and left unmerged (a redelivery writes the same row again).
    const recordings = `${chdb.placement.database}.recordings`;
    await chdb.command(`SYSTEM STOP MERGES ${recordings}`);
    for (let i = 0; i < 2; i++) await chdb.command(`INSERT INTO ${recordings} SELECT * FROM ${recordings} WHERE deleted = 0 AND version = version`);
    const recording: ClickHouse = {
      ...chdb,
      rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)),
      stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)),
    };
    clickhouse = createClickHouseEngine({ db: () => db, ch: recording });
    memory = createMemoryEngine({ db: () => db });
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  const sentFor = async (name: "calls" | "recordings", f: Filters) => {
    sent.length = 0;
    await clickhouse.report(name, f, SCOPE);
    return [...sent];
  };

  it("holds recordings stored three times, unmerged", async () => {
    const [n] = await chdb.rows<{ rows: string; recordings: string }>(`SELECT count() AS rows, (SELECT count() FROM ${chdb.placement.database}.recordings FINAL) AS recordings FROM ${chdb.placement.database}.recordings`);
    expect(Number(n.rows)).toBe(3 * Number(n.recordings));
  });

  const SORTS = (["start", "duration", "participants", "minutes"] as const).flatMap((sort) => (["desc", "asc"] as const).map((order) => [sort, order] as const));

  it.each(SORTS)("lists the calls by %s %s as the in-memory engine does: first, middle, last pages and past the end", async (sort, order) => {
    for (const partial of [{}, { type: "video" }, { from: BASE + 20 * 86_400 + 77, to: BASE + 50 * 86_400 }] as Array<Partial<Filters>>) {
      const f = filters({ ...partial, sort, order, perPage: 25 });
      const first = await memory.report("calls", f, SCOPE);
      const last = Math.ceil(first.meta.pagination.total / 25);
      expect(last).toBeGreaterThan(3);
      for (const page of [1, 2, Math.ceil(last / 2), last, last + 1]) {
        const fp = { ...f, page };
        expect(await clickhouse.report("calls", fp, SCOPE), `${JSON.stringify(partial)} page ${page}`).toEqual(await memory.report("calls", fp, SCOPE));
      }
    }
  });

  it("lists the recordings as the in-memory engine does, with the duplicates unmerged: first, middle, last pages and past the end", async () => {
    for (const partial of [{}, { from: BASE + 10 * 86_400, to: BASE + 30 * 86_400 }, { type: "video" }] as Array<Partial<Filters>>) {
      const f = filters({ ...partial, perPage: 20 });
      const first = await memory.report("recordings", f, SCOPE);
      const last = Math.ceil(first.meta.pagination.total / 20);
      expect(last).toBeGreaterThan(2);
      for (const page of [1, 2, Math.ceil(last / 2), last, last + 1]) {
        const fp = { ...f, page };
        expect(await clickhouse.report("recordings", fp, SCOPE), `${JSON.stringify(partial)} page ${page}`).toEqual(await memory.report("recordings", fp, SCOPE));
      }
    }
  });

  it("reads the first page of calls over a range of starts, not the days of every call, and its total from the pre-aggregate", async () => {
    const queries = await sentFor("calls", filters({}));
    for (const q of queries) expect(q, "no per-day sums of every row").not.toMatch(/GROUP BY day/);
    expect(queries.some((q) => /calls_by_month/.test(q) && /sum\(c\)/.test(q)), "the total from call-sums").toBe(true);
    const page = queries.find((q) => /ORDER BY start_at DESC/.test(q));
    expect(page).toMatch(/start_at >= toDateTime\(\d+\)/);
  });

  it("chooses a page in another order under a bound on the sort key, and reads its rows by (app, start) pairs", async () => {
    const queries = await sentFor("calls", filters({ sort: "minutes", page: 3, perPage: 25 }));
    expect(queries.some((q) => /ORDER BY \(total_audio_minutes_x1000 \+ total_video_minutes_x1000\) DESC LIMIT \d+, 1/.test(q))).toBe(true);
    const keys = queries.find((q) => /stateVersion/.test(q) && /ORDER BY/.test(q));
    expect(keys).toMatch(/\(total_audio_minutes_x1000 \+ total_video_minutes_x1000\) >= toInt64/);
    const byKey = queries.find((q) => /PREWHERE session_code IN/.test(q));
    expect(byKey).toMatch(/\(app_pk = \d+ AND start_at = toDateTime\(\d+\)\)/);
  });

  it("reads the recordings page with FINAL over the calls of the newest rows only", async () => {
    const queries = await sentFor("recordings", filters({}));
    // Each round (the duplicates here eat the first ones: it widens) restricted to the newest rows' calls.
    const page = queries.filter((q) => /FINAL/.test(q) && /LIMIT/.test(q));
    expect(page.length).toBeGreaterThan(0);
    for (const q of page) expect(q).toMatch(/\(app_pk, session_id\) IN \(SELECT app_pk, session_id FROM/);
  });
});
