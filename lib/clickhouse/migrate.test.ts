import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { MIGRATIONS_TABLE, migrateClickHouse } from "./migrate";
import { applyMigrations } from "./migrate";
import { CLIENT_SESSIONS, FACT_TABLES } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./testing";
import { openChdb } from "./testing-chdb";
import { forHost } from "./config";

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
    expect(first.applied.map((a) => a.id)).toEqual([1, 2, 3, 1, 2, 3]);
    expect(first.hosts.join(" ")).not.toContain(ch.password);
    for (const i of [0, 1]) {
      const tables = (await shard(i).rows<{ name: string; engine: string }>(`SELECT name, engine FROM system.tables WHERE database = '${DB}' ORDER BY name`));
      const byName = new Map(tables.map((t) => [t.name, t.engine]));
      for (const t of [...FACT_TABLES, CLIENT_SESSIONS]) {
        expect(byName.get(`${t.name}_local`)).toBe("ReplacingMergeTree");
        expect(byName.get(t.name)).toBe("Distributed");
      }
      expect(byName.get(MIGRATIONS_TABLE)).toBe("MergeTree");
    }
    const again = await migrateClickHouse(ch.config(DB));
    expect(again.applied).toEqual([]);
  });

  it("spreads calls over both shards by (app, session) and keeps every version of a call on one shard", async () => {
    const c = shard(0);
    const row = (app: number, session: string, version: number, audio: number) => ({
      app_pk: app, session_id: session, version, deleted: 0, start_at: 1_700_000_000, platform_has_recording: 0,
      total_audio_minutes_x1000: audio, total_video_minutes_x1000: 0, total_duration_minutes_x1000: 0, duration_seconds: 0,
      total_participants: 0, source: "sync", first_seen_ms: 1, updated_ms: version,
      p_seq: [], p_uid: [], p_state: [], p_is_joined: [], p_total_audio_minutes_x1000: [], p_total_video_minutes_x1000: [],
      p_total_duration_minutes_x1000: [], p_device_id: [], p_joined_at: [], p_left_at: [], p_mid: [], p_raw: [],
    });
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
});

describe("ClickHouse schema on chdb (a current ClickHouse)", () => {
  it("runs the same migrations", async () => {
    const c = openChdb(DB);
    try {
      const applied = await applyMigrations(c, c.placement);
      expect(applied.map((m) => m.id)).toEqual([1, 2, 3]);
      expect(await applyMigrations(c, c.placement)).toEqual([]);
      const tables = await c.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${DB}' ORDER BY name`);
      expect(tables.map((t) => t.name)).toEqual([MIGRATIONS_TABLE, "copy_checkpoints", ...[...FACT_TABLES, CLIENT_SESSIONS].map((t) => t.name)].sort());
    } finally {
      await c.close();
    }
  });
});
