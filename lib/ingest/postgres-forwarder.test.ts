import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { freshState, seedApp, useTestEnv } from "@/lib/auth/test-support";
import { POSTGRES_SKIP_REASON } from "@/lib/postgres/test-postgres";
import { readForwardingBacklog } from "./forward-backlog";
import type { ForwardTarget } from "./forwarder";
import { PostgresForwarder, postgresForwarderStatus } from "./postgres-forwarder";
import { storeDelivery } from "./postgres-inbox";
import { messageSent } from "./test-deliveries";

/**
 * The server's forwarder over the Postgres inbox (DATABASE_URL) and the backlog the Sync
 * page and /api/health show from it: the shared queue counted exactly, the oldest
 * delivery's age, and this server's failures with their retry time. A real Postgres.
 */
describe.skipIf(POSTGRES_SKIP_REASON)("the Postgres forwarder and its backlog", () => {
  let state: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let appPk = 0;

  beforeEach(async () => {
    useTestEnv();
    state = await freshState("postgres");
    db = state.db;
    appPk = (await seedApp(db, "acme")).pk;
  });
  afterEach(async () => {
    await state.dispose();
  });

  const pool = () => (db as unknown as PgDb).$client;
  const store = (id: string, receivedMs: number) =>
    storeDelivery(pool(), {
      appPk, idemKey: `k-${id}`, trigger: "message_sent", webhook: "w", type: null, sessionId: null, outcome: "stored",
      body: JSON.stringify(messageSent({ appId: "acme" }, id)), receivedMs,
    });

  it("counts the shared queue, forwards it, and keeps this server's failures until a batch goes through", async () => {
    const t0 = Date.now() - 40_000;
    for (let i = 0; i < 5; i++) await store(`m${i}`, t0 + i * 1000);
    await store("m0", t0 + 9000); // a repeat: stored once, queued once
    expect(await readForwardingBacklog(db, t0 + 40_000)).toMatchObject({ pending: 5, exact: true, oldestReceivedMs: t0, oldestAgeSeconds: 40, failures: 0, lastError: null });

    let failing = true;
    const written: string[] = [];
    const target: ForwardTarget = {
      async writeDeliveries(rows) {
        if (failing) throw new Error("ClickHouse insert failed: connect ECONNREFUSED http://default:secret@10.0.0.5:8123");
        written.push(...rows.map((r) => r.idemKey));
      },
      async writeEventCounts() {},
      async writeRecordings() {},
      async writeClientSessions() {},
    };
    const forwarder = new PostgresForwarder(pool(), target, { minBackoffMs: 60_000 });
    forwarder.start();
    try {
      await expect.poll(() => postgresForwarderStatus()?.failures ?? 0).toBeGreaterThan(0);
      const failed = await readForwardingBacklog(db);
      expect(failed).toMatchObject({ pending: 5, failures: 1, lastError: expect.stringMatching(/ECONNREFUSED/) });
      expect(failed.lastError).not.toMatch(/secret/); // credentials in a URL are masked
      expect(failed.nextAttemptMs).toBeGreaterThan(Date.now());

      failing = false;
      expect(await forwarder.forwardOnce()).toBe(5);
      expect(written.sort()).toEqual(["k-m0", "k-m1", "k-m2", "k-m3", "k-m4"]);
      expect(await readForwardingBacklog(db)).toMatchObject({ pending: 0, oldestReceivedMs: null, oldestAgeSeconds: null, failures: 0, lastError: null });
      expect(postgresForwarderStatus()?.lastSuccessMs).toBeGreaterThan(t0);
    } finally {
      await forwarder.stop();
    }
    expect(postgresForwarderStatus()).toBeUndefined();
  });
});
