import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { MIGRATIONS_TABLE, migrateClickHouse } from "./migrate";
import { applyMigrations } from "./migrate";
import { CLIENT_SESSIONS, FACT_TABLES } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { openChdb } from "./test-chdb";
import { forHost } from "./config";
import { MIGRATIONS } from "./migrations";
import { MOVE_CHECKPOINTS_TABLE, moveToV2 } from "./move-v2";
import { V2_TABLES } from "./schema-v2";
import { openFixtureDb } from "@/lib/analytics/test-fixtures";
import { filters } from "@/lib/analytics/filters";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";

/** Every migration, and those after 0003 (what a warehouse of 0003 gets), each once per host. */
const ALL_IDS = MIGRATIONS.map((m) => m.id);
const AFTER_0003 = ALL_IDS.filter((id) => id > 3);

process.env.AUTH_SECRET ??= "migrate-test-secret-at-least-32-characters";

/** A `calls` row as JSONEachRow (without `arrival` unless given: a warehouse of migration 0003 has no such column). */
const callRowOf = (app: number, session: string, version: number, audio: number, more: Record<string, unknown> = {}) => ({
  app_pk: app, session_id: session, version, deleted: 0, start_at: 1_700_000_000, platform_has_recording: 0,
  total_audio_minutes_x1000: audio, total_video_minutes_x1000: 0, total_duration_minutes_x1000: 0, duration_seconds: 0,
  total_participants: 0, source: "sync", first_seen_ms: 1, updated_ms: version,
  p_seq: [], p_uid: [], p_state: [], p_is_joined: [], p_total_audio_minutes_x1000: [], p_total_video_minutes_x1000: [],
  p_total_duration_minutes_x1000: [], p_device_id: [], p_joined_at: [], p_left_at: [], p_mid: [], p_raw: [],
  ...more,
});

const DB = "callboard_migrate_test";

describe.skipIf(CLICKHOUSE_SKIP_REASON)("ClickHouse schema on a two-shard cluster", () => {
  let ch: TestClickHouse;
  const clients: ClickHouse[] = [];
  const shard = (i: number) => {
    const c = openClickHouse(forHost(ch.config(DB), ch.servers[i].host));
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    ch = await startClickHouse({ shards: 2 });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await ch?.stop();
  });

  it("creates the local tables on every shard and a Distributed table in front, once", async () => {
    const first = await migrateClickHouse(ch.config(DB));
    expect(first.onCluster).toBe(false);
    expect(first.hosts).toHaveLength(2);
    expect(first.applied.map((a) => a.id)).toEqual([...ALL_IDS, ...ALL_IDS]);
    expect(first.hosts.join(" ")).not.toContain(ch.password);
    for (const i of [0, 1]) {
      const tables = (await shard(i).rows<{ name: string; engine: string }>(`SELECT name, engine FROM system.tables WHERE database = '${DB}' ORDER BY name`));
      const byName = new Map(tables.map((t) => [t.name, t.engine]));
      for (const t of [...FACT_TABLES, CLIENT_SESSIONS]) {
        expect(byName.get(`${t.name}_local`)).toBe("ReplacingMergeTree");
        expect(byName.get(t.name)).toBe("Distributed");
      }
      expect(byName.get(MIGRATIONS_TABLE)).toBe("MergeTree");
      // Migration 0006: the calls' session code, computed by ClickHouse, on the shard's table and the Distributed one.
      const codes = await shard(i).rows<{ table: string; kind: string }>(
        `SELECT table, default_kind AS kind FROM system.columns WHERE database = '${DB}' AND name = 'session_code' AND table LIKE 'calls_v2%' ORDER BY table`,
      );
      expect(codes).toEqual([{ table: "calls_v2", kind: "DEFAULT" }, { table: "calls_v2_local", kind: "DEFAULT" }]);
      // Migration 0007: the link flag in the calls' states and in the sorting key of the calls pre-aggregates (their views sum by it).
      const flagged = await shard(i).rows<{ t: string }>(`SELECT table AS t FROM system.columns WHERE database = '${DB}' AND name = 'has_link' ORDER BY t`);
      expect(flagged.map((r) => r.t)).toEqual([
        "call_raw", "call_raw_local", "calls_by_bucket", "calls_by_bucket_local", "calls_by_bucket_mv_local", "calls_by_month", "calls_by_month_local", "calls_by_month_mv_local", "calls_v2", "calls_v2_local",
      ]);
      const keys = await shard(i).rows<{ name: string; key: string }>(`SELECT name, sorting_key AS key FROM system.tables WHERE database = '${DB}' AND name IN ('calls_by_bucket_local', 'calls_by_month_local') ORDER BY name`);
      for (const k of keys) expect(k.key).toMatch(/has_link$/);
      const views = await shard(i).rows<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = '${DB}' AND name LIKE 'calls_by_%_mv_local'`);
      expect(views).toHaveLength(2);
      for (const v of views) expect(v.q).toContain("has_link");
    }
    const again = await migrateClickHouse(ch.config(DB));
    expect(again.applied).toEqual([]);
  });

  it("spreads calls over both shards by (app, session) and keeps every version of a call on one shard", async () => {
    const c = shard(0);
    const row = callRowOf;
    const first = Array.from({ length: 200 }, (_, i) => row(1, `s${i}`, 1, 1000));
    const second = Array.from({ length: 200 }, (_, i) => row(1, `s${i}`, 2, 2000));
    await c.insert("calls", first);
    await c.insert("calls", second);
    const perShard = await Promise.all([0, 1].map(async (i) => (await shard(i).rows<{ n: number; v: number }>(`SELECT count() AS n, uniqExact(session_id) AS v FROM ${DB}.calls_local`))[0]));
    expect(perShard.every((s) => s.v > 20)).toBe(true); // both shards hold calls
    expect(perShard.every((s) => s.n === 2 * s.v)).toBe(true); // both versions of a call on the same shard
    const [total] = await c.rows<{ n: number; audio: number }>(`SELECT count() AS n, sum(total_audio_minutes_x1000) AS audio FROM ${DB}.calls FINAL`);
    expect(total).toEqual({ n: 200, audio: 400_000 });
  });

  // Every migration after 0003 on two hosts (0010 recreates a table and its view on each): slow on a shared box.
  it("adds calls.arrival to a warehouse of migration 0003 on every host; its calls (arrival 0) still list in one order", { timeout: 90_000 }, async () => {
    const old = "callboard_migrate_0003";
    const config = ch.config(old);
    for (const s of ch.servers) {
      const host = openClickHouse(forHost(config, s.host), { noDatabase: true });
      clients.push(host);
      expect((await applyMigrations(host, host.placement, false, MIGRATIONS.slice(0, 3))).map((m) => m.id)).toEqual([1, 2, 3]);
    }
    const client = openClickHouse(config);
    clients.push(client);
    // Calls stored before 0004, equal in start (the list's key), arriving in an order their keys do not give.
    const sessions = ["s-9", "s-3", "s-7", "s-1", "s-5"];
    await client.insert("calls", sessions.flatMap((session, i) => [callRowOf(2, session, 1, 0), callRowOf(1, `${session}-${i}`, 1, 0)]));
    const report = await migrateClickHouse(config);
    expect(report.applied.map((a) => a.id)).toEqual([...AFTER_0003, ...AFTER_0003]);
    for (const i of [0, 1]) {
      const columns = await shard(i).rows<{ table: string; type: string }>(`SELECT table, type FROM system.columns WHERE database = '${old}' AND name = 'arrival' AND table IN ('calls', 'calls_local') ORDER BY table`);
      expect(columns).toEqual([{ table: "calls", type: "UInt64" }, { table: "calls_local", type: "UInt64" }]);
    }
    // Calls written since, with their arrival (the copy's SQLite pks).
    await client.insert("calls", [callRowOf(1, "new-b", 1, 0, { arrival: 12 }), callRowOf(2, "new-a", 1, 0, { arrival: 11 })]);
    expect(await client.rows(`SELECT arrival, count() AS n FROM ${old}.calls GROUP BY arrival ORDER BY arrival`)).toEqual([
      { arrival: 0, n: 10 }, { arrival: 11, n: 1 }, { arrival: 12, n: 1 },
    ]);
    // Reports read schema v2: the move carries the calls over, arrival with them.
    expect((await moveToV2(config)).moved.length).toBeGreaterThan(0);
    const db = openFixtureDb("migrate-0004"); // apps 1–3
    const engine = createClickHouseEngine({ ch: client, db: () => db });
    const list = async (order: "asc" | "desc") =>
      (await engine.report("calls", filters({ sort: "start", order, perPage: 100 }), { appPks: "all" })).data.map((r) => `${r.app}/${r.sessionId}`);
    const oldOnes = [...sessions.map((s, i) => `app-one/${s}-${i}`).sort(), ...[...sessions].sort().map((s) => `app-two/${s}`)];
    const asc = [...oldOnes, "app-two/new-a", "app-one/new-b"];
    expect(await list("asc")).toEqual(asc);
    expect(await list("desc")).toEqual([...asc].reverse());
    db.$client.close();
  });
});

describe("ClickHouse schema on chdb (a current ClickHouse)", () => {
  it("runs the same migrations, 0004 on a warehouse of 0003 too", async () => {
    const c = openChdb(DB);
    try {
      expect((await applyMigrations(c, c.placement, false, MIGRATIONS.slice(0, 3))).map((m) => m.id)).toEqual([1, 2, 3]);
      await c.insert("calls", [callRowOf(1, "old", 1, 0)]);
      const applied = await applyMigrations(c, c.placement);
      expect(applied.map((m) => m.id)).toEqual(AFTER_0003);
      expect(await c.rows(`SELECT session_id, arrival FROM ${DB}.calls`)).toEqual([{ session_id: "old", arrival: 0 }]);
      expect(await applyMigrations(c, c.placement)).toEqual([]);
      const tables = await c.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${DB}' ORDER BY name`);
      const views = ["calls_by_bucket_mv", "calls_by_month_mv", "participants_by_month_dims_mv", "participants_by_month_mv", "concurrency_by_quarter_mv"];
      expect(tables.map((t) => t.name)).toEqual([MIGRATIONS_TABLE, MOVE_CHECKPOINTS_TABLE, "copy_checkpoints", ...[...FACT_TABLES, CLIENT_SESSIONS, ...V2_TABLES].map((t) => t.name), ...views].sort());
    } finally {
      await c.close();
    }
  });
});
