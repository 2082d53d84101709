import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { migrateClickHouse } from "./migrate";
import { MOVE_CHECKPOINTS_TABLE, moveToV2 } from "./move-v2";
import { MoveBusyError, MoveLease, moveLeaseStatement, MoveStalledError, type LeaseTiming } from "./move-v2-guards";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { answers, history } from "./test-move-v2-history";

/**
 * What keeps `npm run db:migrate`'s move to v2 from waiting forever, on two real 18.16
 * shards (move-v2-guards.ts): two moves started at once end exactly right (before the
 * lease, a second mover deadlocked the servers for good); a move finding another's live
 * lease gives up with a clear error, having changed nothing; a statement that cannot end
 * (a shard frozen) stops the move within its bound, naming the server and the query.
 */

const FAST: LeaseTiming = { leaseSeconds: 3, settleMs: 1_500 };

describe.skipIf(CLICKHOUSE_SKIP_REASON)("the move to v2 never waits forever (two 18.16 shards)", () => {
  let cluster: TestClickHouse;

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
  }, 120_000);
  afterAll(async () => {
    cluster?.freeze(1, false);
    await cluster?.stop();
  }, 240_000); // two shards stopping (and their files removed) on a box whose disk other suites keep busy

  /** A v1 warehouse of its own, migrated and filled with the history. */
  async function warehouse(db: string): Promise<ClickHouse> {
    await migrateClickHouse(cluster.config(db));
    const ch = openClickHouse(cluster.config(db));
    const rows = history();
    for (let i = 0; i < rows.length; i += 250) await ch.insert("calls", rows.slice(i, i + 250));
    return ch;
  }

  async function expectExact(ch: ClickHouse, db: string): Promise<void> {
    const a = await answers(ch, db);
    expect(a.v1.byMonth.length).toBeGreaterThan(40);
    expect(a.v2).toEqual(a.v1);
    expect(a.monthly).toEqual(a.v1);
  }

  const checkpoints = async (ch: ClickHouse, db: string) => Number((await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${db}.${MOVE_CHECKPOINTS_TABLE}`))[0].n);

  it("two moves started at once: one moves, the other waits its turn or gives up; every count exact", { timeout: 240_000 }, async () => {
    const db = "callboard_move_twice";
    const ch = await warehouse(db);
    try {
      const results = await Promise.allSettled([moveToV2(cluster.config(db), { leaseTiming: FAST }), moveToV2(cluster.config(db), { leaseTiming: FAST })]);
      const moved = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.moved.length] : []));
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(MoveBusyError);
      // Every month moved once, by one of them.
      expect(moved.reduce((a, b) => a + b, 0)).toBe(await checkpoints(ch, db));
      expect(Math.max(...moved)).toBeGreaterThan(15);
      await expectExact(ch, db);
    } finally {
      await ch.close();
    }
  });

  it("refuses, changing nothing, while another run holds the lease; moves once that run's lease ended", { timeout: 240_000 }, async () => {
    const db = "callboard_move_busy";
    const ch = await warehouse(db);
    const holder = new MoveLease(ch, ch.placement, "the other run", FAST, (_statement, run) => run(`test-holder-${Date.now()}`));
    try {
      await ch.command(moveLeaseStatement(ch.placement));
      await holder.acquire();
      const started = Date.now();
      const refused = await moveToV2(cluster.config(db), { leaseTiming: FAST }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(MoveBusyError);
      expect((refused as Error).message).toContain(holder.owner);
      expect((refused as Error).message).toContain("changed nothing");
      expect(Date.now() - started).toBeLessThan(30_000); // one lease and the settling pauses, not forever
      expect(await checkpoints(ch, db)).toBe(0);
      expect((await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${db}.calls_v2`))[0].n).toBe(0);
      await holder.release();
      expect((await moveToV2(cluster.config(db), { leaseTiming: FAST })).moved.length).toBeGreaterThan(15);
      await expectExact(ch, db);
    } finally {
      await holder.release();
      await ch.close();
    }
  });

  it("stops within its bound, naming the server and the query, when a statement cannot end (a shard frozen); a later run ends exactly right", { timeout: 240_000 }, async () => {
    const db = "callboard_move_frozen";
    const ch = await warehouse(db);
    try {
      let frozeAt = 0;
      const freeze = (p: { step: string }) => {
        if (p.step === "dropped" && frozeAt === 0) {
          cluster.freeze(1, true); // shard 2 stops answering: the month's INSERT into the Distributed table cannot end
          frozeAt = Date.now();
        }
      };
      const stalled = await moveToV2(cluster.config(db), { leaseTiming: FAST, statementTimeoutMs: 4_000, onProgress: freeze }).catch((e: unknown) => e);
      const waited = Date.now() - frozeAt;
      cluster.freeze(1, false);
      expect(stalled).toBeInstanceOf(MoveStalledError);
      const message = (stalled as Error).message;
      expect(message).toMatch(/ClickHouse http:\/\/default:\*\*\*@127\.0\.0\.[12]:\d+/);
      expect(message).toMatch(/did not finish INSERT INTO `callboard_move_frozen`\.`calls_v2`.* \(query_id callboard-move-v2-[0-9a-f-]{36}\) within 4 s/);
      expect(message).not.toContain(cluster.password);
      expect(waited).toBeLessThan(15_000); // the 4 s bound and the release of the lease, not the 5 min of a request
      // Thawed, the next run kills what is left of the stalled one and moves everything exactly.
      expect((await moveToV2(cluster.config(db), { leaseTiming: FAST })).moved.length).toBeGreaterThan(15);
      await expectExact(ch, db);
    } finally {
      cluster.freeze(1, false);
      await ch.close();
    }
  });
});
