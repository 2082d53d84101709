import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres } from "@/db/postgres/client";
import { closeClickHouse, clickhouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { resetEnvForTests } from "@/lib/config/env";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { clickHouseForwardTarget } from "./clickhouse-target";
import type { DeliveryFact, ForwardTarget } from "./forwarder";
import { forwardBacklog, forwardDeliveries, storeDelivery, type IncomingDelivery } from "./postgres-inbox";

process.env.LOG_LEVEL ??= "silent";

/**
 * The webhook inbox in a real Postgres, shared by two "servers" (two pools), forwarded into
 * a real two-shard ClickHouse by both at once.
 */
describe.skipIf(POSTGRES_SKIP_REASON ?? CLICKHOUSE_SKIP_REASON)("the webhook inbox in Postgres, forwarded to ClickHouse by two servers", () => {
  let postgres: TestPostgres;
  let ch: TestClickHouse;
  let serverA: pg.Pool;
  let serverB: pg.Pool;
  let appPk: number;
  let databases = 0;

  beforeAll(async () => {
    [postgres, ch] = await Promise.all([startPostgres(), startClickHouse({ shards: 2 })]);
  }, 120_000);
  afterAll(async () => {
    await serverA?.end();
    await serverB?.end();
    await closeClickHouse();
    await ch?.stop();
    await postgres?.stop();
    delete process.env.CLICKHOUSE_URL;
    delete process.env.CLICKHOUSE_CLUSTER;
    resetEnvForTests();
  });

  /** A fresh Postgres and ClickHouse database pair; the pools of servers A and B. */
  async function fresh(): Promise<void> {
    const name = `inbox_${++databases}`;
    await serverA?.end();
    await serverB?.end();
    const url = await postgres.createDatabase(name);
    await migratePostgres(parsePostgresConfig(url));
    serverA = new pg.Pool({ connectionString: url, max: 4 });
    serverB = new pg.Pool({ connectionString: url, max: 4 });
    const app = await serverA.query<{ pk: string }>("INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('acme', 'Acme', 'us', 'enc', '1234') RETURNING pk");
    appPk = Number(app.rows[0]!.pk);
    Object.assign(process.env, ch.env(name), { AUTH_SECRET: process.env.AUTH_SECRET ?? "x".repeat(32) });
    resetEnvForTests();
    await closeClickHouse();
    await migrateClickHouse(ch.config(name));
  }

  const delivery = (i: number): IncomingDelivery => {
    const startedAt = 1_767_225_600 + i * 37;
    const data = { sessionId: `s${i}`, startedAt };
    return {
      appPk, idemKey: `call_ended:s${i}`, trigger: "call_ended", webhook: "wh", type: "call", sessionId: `s${i}`, outcome: "applied",
      body: JSON.stringify({ trigger: "call_ended", data, appId: "acme", region: "us", webhook: "wh" }), receivedMs: 1_767_225_600_000 + i,
    };
  };

  /** What a ClickHouse forward target was asked to write, per delivery pk. */
  function counting(inner: ForwardTarget, writes: Map<number, number>): ForwardTarget {
    return {
      ...inner,
      writeDeliveries: async (rows: DeliveryFact[]) => {
        await inner.writeDeliveries(rows);
        for (const r of rows) writes.set(r.pk, (writes.get(r.pk) ?? 0) + 1);
      },
    };
  }

  async function drainBoth(targetA: ForwardTarget, targetB: ForwardTarget): Promise<void> {
    const loop = async (pool: pg.Pool, target: ForwardTarget) => {
      while ((await forwardDeliveries(pool, target, { batchRows: 40 })) > 0) {
        /* next batch */
      }
    };
    await Promise.all([loop(serverA, targetA), loop(serverB, targetB), loop(serverA, targetA), loop(serverB, targetB)]);
  }

  it("a delivery sent to both servers is stored once and queued once", async () => {
    await fresh();
    const n = 300;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) => [storeDelivery(serverA, delivery(i)), storeDelivery(serverB, delivery(i))]).flat(),
    );
    expect(answers.filter((a) => !a.repeat)).toHaveLength(n);
    expect(answers.filter((a) => a.repeat)).toHaveLength(n);
    const stored = await serverA.query<{ rows: string; repeats: string }>("SELECT count(*) AS rows, sum(repeat_count) AS repeats FROM webhook_deliveries");
    expect(stored.rows[0]).toEqual({ rows: String(n), repeats: String(n) });
    expect(await forwardBacklog(serverB)).toBe(n);
  });

  it("two servers forwarding at once write every delivery to ClickHouse exactly once", async () => {
    await fresh();
    const n = 600;
    await Promise.all(Array.from({ length: n }, (_, i) => storeDelivery(i % 2 ? serverA : serverB, delivery(i))));
    const writes = new Map<number, number>();
    const target = counting(clickHouseForwardTarget(clickhouse()), writes);
    await drainBoth(target, target);

    expect(writes.size).toBe(n);
    expect([...writes.values()].every((times) => times === 1)).toBe(true);
    expect(await forwardBacklog(serverA)).toBe(0);
    expect((await serverB.query("SELECT sum(count)::int AS n FROM event_counts")).rows[0]).toEqual({ n });
    // In ClickHouse, before any merge could hide a double write: one row per delivery.
    const [row] = await clickhouse().rows<{ rows: number; keys: number }>("SELECT count() AS rows, uniqExact(idem_key) AS keys FROM webhook_deliveries");
    expect({ rows: Number(row!.rows), keys: Number(row!.keys) }).toEqual({ rows: n, keys: n });
    const [counted] = await clickhouse().rows<{ n: number }>("SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM event_counts GROUP BY app_pk, bucket_start, trigger)");
    expect(Number(counted!.n)).toBe(n);
  });

  it("a server that dies after ClickHouse answered but before its commit leaves the batch queued; the other server sends it, and ClickHouse counts it once", async () => {
    await fresh();
    const n = 120;
    await Promise.all(Array.from({ length: n }, (_, i) => storeDelivery(serverA, delivery(i))));
    const inner = clickHouseForwardTarget(clickhouse());
    const dying: ForwardTarget = {
      ...inner,
      writeDeliveries: async (rows) => {
        await inner.writeDeliveries(rows);
        throw new Error("killed before its commit");
      },
    };
    await expect(forwardDeliveries(serverA, dying, { batchRows: 50 })).rejects.toThrow("killed before its commit");
    expect(await forwardBacklog(serverB)).toBe(n);

    const writes = new Map<number, number>();
    await drainBoth(counting(inner, writes), counting(inner, writes));
    expect(writes.size).toBe(n);
    expect(await forwardBacklog(serverB)).toBe(0);
    // Counted once: the dead server's increments went with its transaction.
    expect((await serverB.query("SELECT sum(count)::int AS n FROM event_counts")).rows[0]).toEqual({ n });
    const [counted] = await clickhouse().rows<{ n: number }>("SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM event_counts GROUP BY app_pk, bucket_start, trigger)");
    expect(Number(counted!.n)).toBe(n);
    // The 50 rows sent twice are one fact each, as every report reads them (by key).
    const [facts] = await clickhouse().rows<{ n: number }>("SELECT count() AS n FROM (SELECT app_pk, idem_key FROM webhook_deliveries GROUP BY app_pk, idem_key)");
    expect(Number(facts!.n)).toBe(n);
  });
});
