import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "@/lib/config/env";
import { EXACT_BACKLOG_ROWS, getForwardingBacklog, getForwardingStatus } from "./forward-backlog";
import { backoffMs } from "./forwarder";
import { messageSent, recordingGenerated } from "./test-deliveries";
import { GroupCommitter } from "./store";
import { startHarness, type Harness } from "./test-harness";

/** The forwarding backlog as SQLite tells it, and what the ingest's retention may prune. Real SQLite files. */
let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const app = () => ({ pk: h.appPk.acme, appId: "acme" });
const body = (d: unknown) => Buffer.from(JSON.stringify(d));
const setCursor = (stream: string, lastPk: number) =>
  h.db.$client
    .prepare("INSERT INTO clickhouse_forwarding (stream, last_pk) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET last_pk = excluded.last_pk")
    .run(stream, lastPk);

describe("forwarding backlog", () => {
  it("counts the deliveries and recordings above each cursor, and the age of the oldest", async () => {
    const t0 = Date.now() - 30_000;
    for (let i = 0; i < 5; i++) expect((await h.ingestor.accept(app(), body(messageSent({ appId: "acme" }, `m${i}`)), t0 + i * 1000)).status).toBe(200);
    expect((await h.ingestor.accept(app(), body(recordingGenerated({ appId: "acme" }, "s1", 1_700_000_000)), t0 + 9000)).status).toBe(200);
    // Nothing forwarded yet: 6 deliveries and 1 recording, the oldest 30 s ago.
    expect(getForwardingBacklog(h.db, t0 + 30_000)).toMatchObject({ pending: 7, exact: true, oldestReceivedMs: t0, oldestAgeSeconds: 30, lastSuccessMs: null, failures: 0 });
    setCursor("deliveries", 3);
    expect(getForwardingBacklog(h.db, t0 + 30_000)).toMatchObject({ pending: 4, oldestReceivedMs: t0 + 3000 });
    setCursor("deliveries", 6);
    setCursor("recordings", 1);
    expect(getForwardingBacklog(h.db, t0 + 30_000)).toMatchObject({ pending: 0, oldestReceivedMs: null, oldestAgeSeconds: null });
  });

  it("estimates a long backlog from the pk distance instead of counting it", () => {
    const insert = h.db.$client.prepare(
      "INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, outcome, body, received_ms, last_received_ms) VALUES (?, ?, 'message_sent', 'w', 'applied', '{}', ?, ?)",
    );
    h.db.$client.transaction(() => {
      for (let i = 0; i < EXACT_BACKLOG_ROWS + 10; i++) insert.run(h.appPk.acme, `k${i}`, 1000 + i, 1000 + i);
    })();
    // Rows of a removed app are gone; the estimate still counts their pks.
    h.db.$client.prepare("DELETE FROM webhook_deliveries WHERE pk <= 100").run();
    expect(getForwardingBacklog(h.db)).toMatchObject({ pending: EXACT_BACKLOG_ROWS + 10, exact: false, oldestReceivedMs: 1100 });
    setCursor("deliveries", 200);
    expect(getForwardingBacklog(h.db)).toMatchObject({ pending: EXACT_BACKLOG_ROWS - 190, exact: true });
  });

  it("is shown only in ClickHouse mode, and its error text only to admins", async () => {
    h.db.$client
      .prepare("INSERT INTO clickhouse_forwarding (stream, failures, last_error) VALUES ('deliveries', 3, 'ClickHouse insert failed: connect ECONNREFUSED 10.0.0.5:8123')")
      .run();
    expect(await getForwardingStatus(h.db, { withError: true })).toBeNull();
    process.env.CLICKHOUSE_URL = "http://callboard:secret@127.0.0.1:1/callboard";
    resetEnvForTests();
    try {
      expect(await getForwardingStatus(h.db, { withError: true })).toMatchObject({ failures: 3, lastError: expect.stringMatching(/ECONNREFUSED/) });
      expect(await getForwardingStatus(h.db, { withError: false })).toMatchObject({ failures: 3, lastError: null });
    } finally {
      delete process.env.CLICKHOUSE_URL;
      resetEnvForTests();
    }
  });

  it("backs off 1 s, 2 s, 4 s … up to the cap", () => {
    expect([1, 2, 3, 4, 7, 8, 40].map((f) => backoffMs(f, 1000, 60_000))).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
  });
});

describe("retention in ClickHouse mode", () => {
  const old = () => Date.now() - 100 * 86_400_000;
  const prune = () => {
    const c = new GroupCommitter(h.ingestSqlite, { retainDeliveriesDays: 90 });
    c.flush();
    c.close();
  };
  const stored = () => h.db.$client.prepare("SELECT count(*) FROM webhook_deliveries").pluck().get();

  it("never prunes a delivery the forwarder has not sent yet", async () => {
    setCursor("deliveries", 0); // the forwarder has started: nothing sent yet
    for (let i = 0; i < 4; i++) expect((await h.ingestor.accept(app(), body(messageSent({ appId: "acme" }, `old${i}`)), old())).status).toBe(200);
    setCursor("deliveries", 2);
    prune();
    // The two forwarded rows went; the two waiting for ClickHouse stay, however old.
    expect(h.db.$client.prepare("SELECT pk FROM webhook_deliveries ORDER BY pk").pluck().all()).toEqual([3, 4]);
  });

  it("prunes as before when nothing is forwarded (SQLite mode)", async () => {
    for (let i = 0; i < 4; i++) expect((await h.ingestor.accept(app(), body(messageSent({ appId: "acme" }, `old${i}`)), old())).status).toBe(200);
    prune();
    expect(stored()).toBe(0);
  });
});
