import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCallsSql, onServer } from "@/bench/clickhouse-data";
import { migrateClickHouse, openClickHouse, type ClickHouse } from "@/lib/clickhouse";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { moveToV2 } from "@/lib/clickhouse/move-v2";
import { filters } from "../../filters";
import { openFixtureDb } from "../../test-fixtures";
import { createClickHouseEngine } from "./engine";
import { REPORT_CSV_WRITERS } from "../../report-csv-writers";

/**
 * The participants reports aggregate on each shard (decision 0018 §1). Every query here
 * runs on a two-shard cluster whose servers allow a GROUP BY at most MAX_KEYS keys. The
 * warehouse has 20,000 calls with about 57,000 participant rows, but only 4 apps × 2,500
 * uids. The per-call merge that once ran above the Distributed table grouped one key per
 * (call, uid) and stops at that limit. At 10M calls the same query broke the memory limit
 * and the engine answered 503. Aggregating each shard's calls straight to (app, uid)
 * keeps every GROUP BY within the number of participants, whatever the number of calls.
 */
process.env.AUTH_SECRET ??= "per-shard-test-secret-at-least-32-characters!";

const DB = "callboard_per_shard";
const CALLS = 20_000;
const MAX_KEYS = 15_000;

describe.skipIf(CLICKHOUSE_SKIP_REASON)("ClickHouse participants, aggregated per shard", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const db = openFixtureDb("ch-per-shard");
  // The generated calls' apps are pks 1–4 (bench/clickhouse-data.ts); the fixture has 1–3.
  db.$client.prepare("INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('app-four', 'App Four', 'us', 'x', 'xxxx')").run();
  const engine = () => createClickHouseEngine({ db: () => db, ch });
  const ALL = { appPks: "all" as const };

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2, profileSettings: { max_rows_to_group_by: MAX_KEYS, group_by_overflow_mode: "throw" } });
    await migrateClickHouse(cluster.config(DB));
    await Promise.all(cluster.servers.map((s, i) => onServer(s, cluster.password, generateCallsSql(`\`${DB}\`.calls_local`, 0, CALLS, i, cluster.servers.length))));
    await moveToV2(cluster.config(DB)); // generated in v1; the reports read v2
    ch = openClickHouse(cluster.config(DB));
  }, 120_000);

  afterAll(async () => {
    await ch?.close();
    await cluster?.stop();
    db.$client.close();
  });

  it("holds more (call, uid) pairs than the servers let one GROUP BY keep", async () => {
    const [pairs] = await ch.rows<{ n: number }>(`SELECT sum(length(p_uid)) AS n FROM ${DB}.calls`);
    expect(pairs.n).toBeGreaterThan(2.5 * MAX_KEYS);
    // The limit is real: a GROUP BY per (call, uid) is refused.
    await expect(ch.rows(`SELECT session_id, uid FROM ${DB}.calls ARRAY JOIN p_uid AS uid GROUP BY session_id, uid`)).rejects.toThrow(/Limit for rows to GROUP BY exceeded/);
  });

  it("answers participants, their count and their CSV within it", async () => {
    const page = await engine().report("participants", filters({ sort: "minutes", perPage: 5 }), ALL);
    const [expected] = await ch.rows<{ n: number; calls: number }>(
      `SELECT uniqExact(app_pk, uid) AS n, count() AS calls FROM (SELECT app_pk, arrayDistinct(p_uid) AS uids FROM ${DB}.calls FINAL WHERE deleted = 0) ARRAY JOIN uids AS uid`,
    );
    expect(page.meta.pagination.total).toBe(expected.n);
    expect(page.data).toHaveLength(5);
    // The CSV as a client gets it (its lines written from RowBinary): app, uid, calls, … (generated uids need no quotes).
    const text = await new Response(REPORT_CSV_WRITERS.participants.csv.stream(await engine().csv("participants", filters(), ALL))).text();
    const lines = text.split("\r\n").slice(1, -1);
    const rows = lines.length;
    const calls = lines.reduce((sum, line) => sum + Number(line.split(",")[2]), 0);
    // Every participant once, and each call counted once per distinct uid in it.
    expect([rows, calls]).toEqual([expected.n, expected.calls]);
  });

  it("answers the combined participants and engagement within it", async () => {
    const combined = await engine().report("participants-combined", filters({ perPage: 3 }), ALL);
    const [uids] = await ch.rows<{ n: number }>(`SELECT uniqExact(uid) AS n FROM ${DB}.calls ARRAY JOIN p_uid AS uid`);
    expect(combined.meta.pagination.total).toBe(uids.n);
    const engagement = await engine().report("engagement", filters({ type: "video", status: "ended" }), ALL);
    expect(engagement.data.reduce((s, b) => s + b.participants, 0)).toBeGreaterThan(0);
  });
});
