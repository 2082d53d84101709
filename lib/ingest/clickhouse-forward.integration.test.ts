import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeClickHouse, clickhouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/testing";
import { restartable, type RestartableServer } from "@/lib/clickhouse/testing-restart";
import { resetEnvForTests } from "@/lib/config/env";
import { killMidRun } from "@/lib/testing/kill-mid-run";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";
import { getClickHouseHealth } from "@/lib/health/clickhouse-health";
import { clickHouseFacts, deliveryMix, missingInClickHouse, sqliteFacts } from "./clickhouse-forward-support";
import { clickHouseForwardTarget } from "./clickhouse-target";
import { getForwardingBacklog } from "./forward-backlog";
import { Forwarder } from "./forwarder";
import { postJson, startHarness, type Harness } from "./test-harness";

process.env.LOG_LEVEL ??= "silent";

/**
 * Webhook ingest in ClickHouse mode, end to end over real HTTP: deliveries answered by the
 * ingest (durable in SQLite first), forwarded by the forwarder into a real clickhouse-server.
 * Each test has its own SQLite warehouse and ClickHouse database.
 */
describe.skipIf(CLICKHOUSE_SKIP_REASON)("forwarding webhook facts to ClickHouse", () => {
  let ch: TestClickHouse;
  let server: RestartableServer;
  let h: Harness | undefined;
  let forwarder: Forwarder | undefined;
  let databases = 0;

  beforeAll(async () => {
    ch = await startClickHouse();
    server = restartable(ch, 0);
  });
  afterEach(async () => {
    await forwarder?.stop();
    forwarder = undefined;
    await h?.close();
    h = undefined;
  });
  afterAll(async () => {
    await closeClickHouse();
    await server?.stop();
    await ch?.stop();
    delete process.env.CLICKHOUSE_URL;
    resetEnvForTests();
  });

  /** A fresh ingest harness and ClickHouse database, this process's configuration from now on. */
  async function fresh(): Promise<{ h: Harness; env: Record<string, string> }> {
    const name = `forward_test_${++databases}`;
    const env = ch.env(name);
    h = await startHarness();
    Object.assign(process.env, env); // after startHarness, which resets the environment
    resetEnvForTests();
    await closeClickHouse();
    await migrateClickHouse(ch.config(name));
    return { h, env };
  }

  const fastForwarder = (harness: Harness) =>
    new Forwarder(harness.db, clickHouseForwardTarget(clickhouse()), { batchRows: 100, idleMs: 50, minBackoffMs: 50, maxBackoffMs: 400 });

  async function postAll(harness: Harness, deliveries: unknown[]): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < deliveries.length; i += 25) {
      const chunk = deliveries.slice(i, i + 25);
      statuses.push(...(await Promise.all(chunk.map((d) => postJson(harness.baseUrl, "acme", d)))).map((r) => r.status));
    }
    return statuses;
  }

  async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("forwards every stored delivery, recording and event count once, even when a batch is sent again", async () => {
    const { h } = await fresh();
    const mix = deliveryMix("acme", 420);
    const statuses = await postAll(h, [...mix, ...mix.slice(0, 60)]); // 60 repeats
    expect(statuses.every((s) => s === 200)).toBe(true);
    const local = sqliteFacts(h.db);
    expect(local.deliveries).toBe(420);
    expect(local.recordings).toBe(70);

    const f = fastForwarder(h);
    await f.drain();
    expect(await clickHouseFacts(clickhouse())).toMatchObject(local);
    const forwarded = () => h.db.$client.prepare("SELECT forwarded FROM clickhouse_forwarding WHERE stream = 'deliveries'").pluck().get();
    expect(forwarded()).toBe(420);
    expect(getForwardingBacklog(h.db)).toMatchObject({ pending: 0, exact: true, oldestAgeSeconds: null, failures: 0 });

    // A forwarder killed after ClickHouse took its batches but before the cursor moved sends
    // them again: ClickHouse then holds two rows of each, and still one fact.
    h.db.$client.prepare("UPDATE clickhouse_forwarding SET last_pk = 0").run();
    expect(getForwardingBacklog(h.db).pending).toBe(490);
    await f.drain();
    expect(forwarded()).toBe(840);
    expect(await clickHouseFacts(clickhouse())).toMatchObject(local);

    // New deliveries in buckets already forwarded: the counts are replaced, not added to.
    const more = deliveryMix("acme", 30, "late");
    expect((await postAll(h, more)).every((s) => s === 200)).toBe(true);
    await f.drain();
    const after = sqliteFacts(h.db);
    expect(after.deliveries).toBe(450);
    expect(await clickHouseFacts(clickhouse())).toMatchObject({ deliveries: after.deliveries, counted: after.counted, buckets: after.buckets, recordings: after.recordings });
  });

  it("answers 200 while ClickHouse is down, keeps a visible backlog, and forwards all of it once ClickHouse is back", async () => {
    const { h } = await fresh();
    forwarder = fastForwarder(h).start();
    const first = deliveryMix("acme", 60, "before");
    expect((await postAll(h, first)).every((s) => s === 200)).toBe(true);
    await until("the first deliveries to reach ClickHouse", async () => getForwardingBacklog(h.db).pending === 0);

    await server.down();
    try {
      const during = deliveryMix("acme", 300, "during");
      const statuses = await postAll(h, during);
      // Every delivery is acknowledged from SQLite alone.
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      await until("the forwarder to fail", () => getForwardingBacklog(h.db).failures >= 2);
      const backlog = getForwardingBacklog(h.db);
      expect(backlog.pending).toBe(300 + 50); // 300 deliveries, 50 of them recordings
      expect(backlog.oldestReceivedMs).not.toBeNull();
      expect(backlog.lastError).toMatch(/ClickHouse/);
      expect(backlog.lastError).not.toContain(ch.password);
      expect(backlog.nextAttemptMs).toBeGreaterThan(Date.now() - 1_000);
      const health = await getClickHouseHealth(() => h.db, createClickHouseEngine({ db: () => h.db, ch: clickhouse() }));
      expect(health).toMatchObject({ clickhouse: "unreadable", forwarding: { pending: 350, failing: true } });
      expect(JSON.stringify(health)).not.toContain(ch.password);
    } finally {
      await server.up();
    }
    forwarder.wake();
    await until("the backlog to drain", () => getForwardingBacklog(h.db).pending === 0);
    expect(getForwardingBacklog(h.db)).toMatchObject({ failures: 0, lastError: null });
    expect(await missingInClickHouse(h.db, clickhouse())).toEqual([]);
    const local = sqliteFacts(h.db);
    expect(await clickHouseFacts(clickhouse())).toMatchObject({ deliveries: 360, counted: local.counted, buckets: local.buckets, recordings: local.recordings });
    expect(await getClickHouseHealth(() => h.db, createClickHouseEngine({ db: () => h.db, ch: clickhouse() }))).toMatchObject({ clickhouse: "ok", forwarding: { pending: 0, failing: false } });
  });

  it("converges with no double counting after a forwarding process is SIGKILLed mid-way", async () => {
    const { h, env } = await fresh();
    expect((await postAll(h, deliveryMix("acme", 300, "kill"))).every((s) => s === 200)).toBe(true);
    const { out } = await killMidRun(
      path.join(import.meta.dirname, "forwarder-child.fixture.ts"),
      { ...process.env, ...env, DB_FILE: h.file, BATCH_ROWS: "20", DELAY_MS: "100" },
      /batch 5\n/,
    );
    expect(out).not.toMatch(/done/);
    const partial = await clickHouseFacts(clickhouse());
    expect(partial.deliveries).toBeGreaterThan(0);
    expect(partial.deliveries).toBeLessThan(300);
    const backlog = getForwardingBacklog(h.db).pending;
    expect(backlog).toBeGreaterThan(0);

    await fastForwarder(h).drain();
    const local = sqliteFacts(h.db);
    expect(await clickHouseFacts(clickhouse())).toMatchObject(local);
    expect(getForwardingBacklog(h.db).pending).toBe(0);
  });
});
