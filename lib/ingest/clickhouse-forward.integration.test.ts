import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeClickHouse, clickhouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { restartable, type RestartableServer } from "@/lib/clickhouse/test-restart";
import { resetEnvForTests } from "@/lib/config/env";
import { killMidRun } from "@/lib/testing/kill-mid-run";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { filters } from "@/lib/analytics/filters";
import { backfillClientSessionsFromDeliveries } from "@/lib/clickhouse/client-sessions-backfill";
import { countBoth } from "@/lib/clickhouse/copy";
import { deliveryRow } from "@/lib/clickhouse/rows";
import { getClickHouseHealth } from "@/lib/health/clickhouse-health";
import { clickHouseFacts, deliveryMix, missingInClickHouse, sqliteFacts } from "./clickhouse-forward-support";
import { clickHouseForwardTarget } from "./clickhouse-target";
import { envelope, participantJoined, participantLeft } from "./test-deliveries";
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
    expect(getForwardingBacklog(h.db).pending).toBe(420 + 70 + 35); // deliveries, recordings, participant sessions
    await f.drain();
    expect(forwarded()).toBe(840);
    expect(await clickHouseFacts(clickhouse())).toMatchObject(local);

    // New deliveries in buckets already forwarded: the counts are replaced, not added to.
    const more = deliveryMix("acme", 30, "late");
    expect((await postAll(h, more)).every((s) => s === 200)).toBe(true);
    await f.drain();
    const after = sqliteFacts(h.db);
    expect(after.deliveries).toBe(450);
    expect(await clickHouseFacts(clickhouse())).toMatchObject(after);
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
      expect(backlog.pending).toBe(300 + 50 + 25); // 300 deliveries, 50 of them recordings, 25 joins
      expect(backlog.oldestReceivedMs).not.toBeNull();
      expect(backlog.lastError).toMatch(/ClickHouse/);
      expect(backlog.lastError).not.toContain(ch.password);
      expect(backlog.nextAttemptMs).toBeGreaterThan(Date.now() - 1_000);
      const health = await getClickHouseHealth(() => h.db, createClickHouseEngine({ db: () => h.db, ch: clickhouse() }));
      expect(health).toMatchObject({ clickhouse: "unreadable", forwarding: { pending: 375, failing: true } });
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

  it("carries participant sessions and their leaves; old joins only ClickHouse holds are filled once; both engines' clients reports agree", async () => {
    const { h } = await fresh();
    const acme = { appId: "acme" };
    const t0 = 1_765_000_000;
    // Joins only ClickHouse still holds: forwarded long ago, pruned from SQLite since.
    const oldJoins = Array.from({ length: 12 }, (_, i) => {
      const body = envelope(acme, "call_participant_joined", { sessionId: `gone-${i % 4}`, occupant: { name: `o${i}`, joined_at: t0 - 400 * 86_400 + i }, initial_config: { platform: "legacy", sdk: "web", call_version: "2" } }, "call");
      return deliveryRow({
        appPk: h.appPk.acme, idemKey: `old-${i}`, trigger: "call_participant_joined", category: "call", webhook: "wh-callboard", type: "call", sessionId: `gone-${i % 4}`,
        outcome: "applied", body: JSON.stringify(body), receivedMs: (t0 - 400 * 86_400 + i) * 1000, bucketStart: 0, repeatCount: 0, lastReceivedMs: (t0 - 400 * 86_400 + i) * 1000,
      });
    });
    await clickhouse().insert("webhook_deliveries", oldJoins);

    const joins = Array.from({ length: 40 }, (_, i) => {
      const j = participantJoined(acme, `cs-${i % 10}`, { name: `p${i}`, joined_at: t0 + i * 60, audio_call: i % 3 ? "false" : "true" });
      (j.data as { initial_config: Record<string, unknown> }).initial_config.platform = ["web", "android", "ios"][i % 3];
      return j;
    });
    expect((await postAll(h, [...joins, ...joins.slice(0, 8)])).every((s) => s === 200)).toBe(true);
    const f = fastForwarder(h);
    await f.drain();
    // A leave after its session was forwarded: the session goes again, with its left time.
    expect((await postAll(h, [participantLeft(acme, "cs-3", { name: "p3", joined_at: t0 + 180, left_at: t0 + 999 })])).every((s) => s === 200)).toBe(true);
    await f.drain();
    const leftAt = await clickhouse().rows<{ left_at: number | null }>("SELECT left_at FROM client_sessions FINAL WHERE occupant = 'p3'");
    expect(leftAt.map((r) => Number(r.left_at))).toEqual([t0 + 999]);
    // (The server's first ClickHouse write may already have started the fill in the background: sessions are compared below.)
    const { clientSessions: _sessions, ...local } = sqliteFacts(h.db);
    expect(await clickHouseFacts(clickhouse())).toMatchObject({ ...local, deliveries: local.deliveries + oldJoins.length });

    await backfillClientSessionsFromDeliveries(clickhouse());
    expect(await backfillClientSessionsFromDeliveries(clickhouse())).toBe(0); // once
    // Rows SQLite sent win over the fill's reading of the same joins (their left time stays).
    expect((await clickhouse().rows<{ left_at: number | null }>("SELECT left_at FROM client_sessions FINAL WHERE occupant = 'p3'")).map((r) => Number(r.left_at))).toEqual([t0 + 999]);
    const memory = createMemoryEngine({ db: () => h.db });
    const chEngine = createClickHouseEngine({ db: () => h.db, ch: clickhouse() });
    const recent = filters({ from: t0 - 86_400 });
    expect((await memory.report("clients", recent, { appPks: "all" })).data.length).toBeGreaterThan(5);
    expect(await chEngine.report("clients", recent, { appPks: "all" })).toEqual(await memory.report("clients", recent, { appPks: "all" }));
    const all = (await chEngine.report("clients", filters({}), { appPks: "all" })).data;
    expect(all.find((r) => r.dimension === "platform" && r.value === "legacy")).toMatchObject({ sessions: 12, calls: 4 });
    // The copy's count check compares what SQLite sent, not the fill's rows.
    expect((await countBoth(h.db, clickhouse())).find((c) => c.table === "client_sessions")).toEqual({ table: "client_sessions", sqlite: 40, clickhouse: 40 });
  });

  it("converges with no double counting after a forwarding process is SIGKILLed mid-way", async () => {
    const { h, env } = await fresh();
    expect((await postAll(h, deliveryMix("acme", 300, "kill"))).every((s) => s === 200)).toBe(true);
    const { out } = await killMidRun(
      path.join(import.meta.dirname, "test-forwarder-child.ts"),
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
