import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { BENCH_APPS, generateCalls, onServer } from "./clickhouse-data";

/**
 * The benchmark's generated calls (bench/clickhouse-data.ts) on the two-shard harness:
 * every call on the shard the Distributed table routes it to, and the platform mix's shape.
 */
describe.skipIf(CLICKHOUSE_SKIP_REASON)("bench data generated in ClickHouse", () => {
  let ch: TestClickHouse;
  const database = "bench_data_test";
  const calls = 20_000;

  beforeAll(async () => {
    ch = await startClickHouse({ shards: 2 });
    await migrateClickHouse(ch.config(database));
    await generateCalls(ch.servers, ch.password, database, calls, () => {});
  }, 120_000);
  afterAll(async () => {
    await ch?.stop();
  });

  const query = async (sql: string, server = 0) => JSON.parse(await onServer(ch.servers[server], ch.password, `${sql} FORMAT JSONEachRow`)) as Record<string, number>;

  it("writes every call once, each on the shard the sharding key names", async () => {
    const total = await query(`SELECT count() AS n, uniqExact(app_pk, session_id) AS distinct FROM ${database}.calls`);
    expect(Number(total.n)).toBe(calls);
    expect(Number(total.distinct)).toBe(calls);
    for (const [i] of ch.servers.entries()) {
      const local = await query(`SELECT count() AS n, countIf(cityHash64(app_pk, session_id) % 2 != ${i}) AS misplaced FROM ${database}.calls_local`, i);
      expect(Number(local.n)).toBeGreaterThan(calls * 0.4);
      expect(Number(local.misplaced)).toBe(0);
    }
  });

  it("has the platform mix's shape: ~2.85 participant rows a call, its modes, statuses and apps", async () => {
    const s = await query(`SELECT avg(length(p_uid)) AS rows, avg(mode = 'call') AS calls, avg(mode = 'meet') AS meets,
        avg(status = 'unanswered') AS unanswered, avg(status = 'rejected') AS rejected, uniqExact(app_pk) AS apps,
        avg(receiver_type = 'group') AS groups, min(length(p_uid) = length(p_total_duration_minutes_x1000) AND length(p_uid) = length(p_device_id)) AS aligned,
        max(start_at) - min(start_at) AS span, avg(total_duration_minutes_x1000 = intDiv(duration_seconds * 1000 + 30, 60)) AS minutes
      FROM ${database}.calls`);
    expect(Number(s.rows)).toBeGreaterThan(2.75);
    expect(Number(s.rows)).toBeLessThan(2.95);
    expect(Number(s.calls)).toBeCloseTo(0.6, 1);
    expect(Number(s.meets)).toBeCloseTo(0.3, 1);
    expect(Number(s.groups)).toBeCloseTo(0.4, 1);
    // 12 % unanswered and 7 % rejected drawn; groups are never rejected (unanswered instead).
    expect(Number(s.rejected)).toBeCloseTo(0.07 * 0.6, 1);
    expect(Number(s.unanswered)).toBeCloseTo(0.12 + 0.07 * 0.4, 1);
    expect(Number(s.apps)).toBe(BENCH_APPS);
    expect(Number(s.aligned)).toBe(1);
    expect(Number(s.span)).toBeGreaterThan(9 * 30 * 86_400);
    expect(Number(s.minutes)).toBe(1);
  });
});
