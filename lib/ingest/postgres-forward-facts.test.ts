import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { filters } from "@/lib/analytics/filters";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";
import { closeClickHouse, clickhouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import type { CallStateV2 } from "@/lib/clickhouse/rows-v2";
import { qualified } from "@/lib/clickhouse/schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { CallWriterV2, openShardsV2 } from "@/lib/clickhouse/writer-v2";
import { resetEnvForTests } from "@/lib/config/env";
import { releaseSyncLease, takeSyncLease } from "@/lib/locks/sync-lease";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { clickHouseForwardTarget } from "./clickhouse-target";
import { readForwardingBacklog } from "./forward-backlog";
import type { ForwardTarget } from "./forwarder";
import type { Ingestor } from "./ingest";
import { PostgresForwarder } from "./postgres-forwarder";
import { createPostgresIngestor, forwardBacklog, forwardDeliveries } from "./postgres-inbox";
import { messageSent, participantJoined, participantLeft, recordingGenerated, sessionEnded, type Delivery } from "./test-deliveries";

process.env.LOG_LEVEL ??= "silent";
process.env.AUTH_SECRET ??= "forward-facts-test-secret-at-least-32-chars";

/**
 * What the Postgres inbox forwards to ClickHouse beside the deliveries, as SQLite's
 * forwarder does (issue 26; decision 0035 §6): the recordings, their calls' link flags
 * (calls_v2.has_link, set under the app's Postgres sync lease, exactly once with two servers
 * forwarding), and the participant sessions' clients; and the forwarder's last failure kept
 * in Postgres, so that every server reports it. A real Postgres and a two-shard ClickHouse;
 * servers A and B are two state handles (two pools) with a webhook route each.
 */
describe.skipIf(POSTGRES_SKIP_REASON ?? CLICKHOUSE_SKIP_REASON)("the Postgres forwarder's recordings, link flags and clients, from two servers", () => {
  let postgres: TestPostgres;
  let cluster: TestClickHouse;
  let databases = 0;
  const handles: PgDb[] = [];

  beforeAll(async () => {
    [postgres, cluster] = await Promise.all([startPostgres(), startClickHouse({ shards: 2 })]);
  }, 120_000);
  afterAll(async () => {
    for (const h of handles) await h.$client.end();
    await closeClickHouse();
    await cluster?.stop();
    await postgres?.stop();
    delete process.env.CLICKHOUSE_URL;
    delete process.env.CLICKHOUSE_CLUSTER;
    resetEnvForTests();
  }, 120_000);

  interface Server {
    pool: PgDb;
    state: Db;
    ingest: Ingestor;
    /** The server's forward target, with the link flags as the server sets them. */
    target: ForwardTarget;
  }
  interface Env {
    a: Server;
    b: Server;
    appPk: number;
    writer: CallWriterV2;
    database: string;
  }

  async function fresh(): Promise<Env> {
    const database = `facts_${++databases}`;
    const url = await postgres.createDatabase(database);
    await migratePostgres(parsePostgresConfig(url));
    Object.assign(process.env, cluster.env(database));
    resetEnvForTests();
    await closeClickHouse();
    const config = cluster.config(database);
    await migrateClickHouse(config);
    const writer = new CallWriterV2(clickhouse(), await openShardsV2(clickhouse(), config));
    const server = (): Server => {
      const pool = openPostgres(parsePostgresConfig(url), { max: 4 });
      handles.push(pool);
      const state = stateDbOfPostgres(pool);
      return { pool, state, ingest: createPostgresIngestor(pool), target: clickHouseForwardTarget(clickhouse(), { db: state, writer: async () => writer }) };
    };
    const a = server();
    const b = server();
    const app = await a.pool.$client.query<{ pk: string }>("INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('acme', 'Acme', 'us', 'enc', '1234') RETURNING pk");
    return { a, b, appPk: Number(app.rows[0]!.pk), writer, database };
  }

  const A = { appId: "acme" };
  async function send(server: Server, appPk: number, delivery: Delivery): Promise<void> {
    const answer = await server.ingest.accept({ pk: appPk, appId: "acme" }, new TextEncoder().encode(JSON.stringify(delivery)));
    expect(answer.status).toBe(200);
  }

  /** Both servers forward at once until the queue is empty (what each can take). */
  async function drainBoth(e: Env): Promise<void> {
    const loop = async (s: Server) => {
      while ((await forwardDeliveries(s.pool.$client, s.target, { batchRows: 7 })) > 0) {
        /* next batch */
      }
    };
    await Promise.all([loop(e.a), loop(e.b), loop(e.a), loop(e.b)]);
  }

  const JAN = Date.UTC(2026, 0, 10) / 1000;
  function callState(appPk: number, sessionId: string, startAt: number): CallStateV2 {
    return {
      appPk, sessionId, version: 1_000, startAt, type: "audio", mode: "call", status: "ended", receiverType: "user", platformHasRecording: false,
      audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, durationSeconds: 180, initiatedAt: startAt, startedAt: startAt, endedAt: startAt + 180,
      initiator: "alice", receiver: "bob", firstSeenMs: startAt * 1000, arrival: 1, source: "sync", contentHash: `h-${sessionId}`,
      participants: [
        { seq: 0, uid: "alice", isJoined: true, audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, state: "left" },
        { seq: 1, uid: "bob", isJoined: true, audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, state: "left" },
      ],
    };
  }
  const synced = (e: Env, ids: string[]) => e.writer.write(e.appPk, ids.map((id, i) => callState(e.appPk, id, JAN + i * 60)).map((s) => ({ sessionId: s.sessionId, version: s.version, next: s })));

  /** The hasRecording breakdown as server B's reports read it (its apps from B's Postgres handle). */
  async function hasRecordingOnB(e: Env): Promise<Record<string, number>> {
    const engine = createClickHouseEngine({ ch: clickhouse(), db: () => e.b.state });
    const rows = (await engine.report("breakdowns", filters({}), { appPks: "all" })).data;
    return Object.fromEntries(rows.filter((r) => r.dimension === "hasRecording").map((r) => [r.value, r.calls]));
  }

  const t = (e: Env, table: string) => qualified(e.database, table);
  const one = async (q: string) => Number((await clickhouse().rows<{ n: number }>(q))[0]?.n ?? 0);

  it("participant sessions and recordings received by either server reach ClickHouse once, in their last state", async () => {
    const e = await fresh();
    const calls = ["c1", "c2", "c3"];
    const deliveries = calls.flatMap((id, i) => {
      const at = JAN + i * 1_000;
      return [
        participantJoined(A, id, { name: "alice", joined_at: at }),
        participantJoined(A, id, { name: "bob", joined_at: at + 5 }),
        participantLeft(A, id, { name: "bob", joined_at: at + 5, left_at: at + 50 }),
        sessionEnded(A, id, at, at + 300, [{ name: "alice", joined_at: at, left_at: at + 300 }, { name: "bob", joined_at: at + 5, left_at: at + 50 }]),
        recordingGenerated(A, id, at + 1),
      ];
    });
    // Each delivery to the other server than the one before; forwarding meanwhile, so that a
    // session's join is forwarded before its leave is received.
    for (const [i, d] of deliveries.entries()) {
      await send(i % 2 ? e.b : e.a, e.appPk, d);
      if (i % 4 === 3) await drainBoth(e);
    }
    await drainBoth(e);
    expect(await forwardBacklog(e.a.pool.$client)).toBe(0);

    const inPostgres = await e.a.pool.$client.query<{ session_id: string; occupant: string; joined_at: string; left_at: string | null }>(
      "SELECT session_id, occupant, joined_at, left_at FROM client_sessions ORDER BY session_id, occupant",
    );
    expect(inPostgres.rows).toHaveLength(6);
    expect(inPostgres.rows.every((r) => r.left_at !== null)).toBe(true);
    // ClickHouse, each stay at its highest change stamp (what FINAL keeps).
    const inClickHouse = await clickhouse().rows<{ session_id: string; occupant: string; joined_at: number; left_at: number | null }>(
      `SELECT session_id, occupant, argMax(joined_at, version) AS joined_at, argMax(left_at, version) AS left_at FROM ${t(e, "client_sessions")}
       GROUP BY app_pk, session_id, occupant, joined_key ORDER BY session_id, occupant`,
    );
    expect(inClickHouse.map((r) => ({ ...r, joined_at: Number(r.joined_at), left_at: r.left_at === null ? null : Number(r.left_at) })))
      .toEqual(inPostgres.rows.map((r) => ({ ...r, joined_at: Number(r.joined_at), left_at: r.left_at === null ? null : Number(r.left_at) })));
    expect(await one(`SELECT count() AS n FROM (SELECT app_pk, session_id, start_key FROM ${t(e, "recordings")} GROUP BY app_pk, session_id, start_key)`)).toBe(calls.length);
    // Every delivery counted once.
    expect(await one(`SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM ${t(e, "event_counts")} GROUP BY app_pk, bucket_start, trigger)`)).toBe(deliveries.length);
  }, 120_000);

  it("a recording webhook on server A sets its call's link flag once, with both servers forwarding: B's reports count it as recorded", async () => {
    const e = await fresh();
    await synced(e, ["rec", "plain"]);
    expect(await hasRecordingOnB(e)).toEqual({ true: 0, false: 2 });
    await send(e.a, e.appPk, recordingGenerated(A, "rec", JAN + 5));
    await send(e.b, e.appPk, recordingGenerated(A, "rec", JAN + 5)); // the platform's retry, to the other server: a repeat
    await send(e.a, e.appPk, recordingGenerated(A, "rec", JAN + 65)); // a second link of the same call
    await drainBoth(e);
    expect(await hasRecordingOnB(e)).toEqual({ true: 1, false: 1 });
    // Once: the state, its cancel row and the flagged state.
    expect(await one(`SELECT count() AS n FROM ${t(e, "calls_v2")} WHERE session_id = 'rec'`)).toBe(3);
  }, 120_000);

  it("while a sync holds the app's lease, the recording waits queued (not counted); the rest is forwarded; after it, the flag lands once", async () => {
    const e = await fresh();
    await synced(e, ["held"]);
    expect((await takeSyncLease(e.b.state, e.appPk, "a-running-sync", 60_000)).acquired).toBe(true);
    await send(e.a, e.appPk, recordingGenerated(A, "held", JAN + 5));
    await send(e.a, e.appPk, messageSent(A, "hello-1", JAN));
    const deferred: number[] = [];
    expect(await forwardDeliveries(e.a.pool.$client, e.a.target, { onDeferred: (appPk) => deferred.push(appPk) })).toBe(1); // the message
    expect(deferred).toEqual([e.appPk]);
    expect(await forwardBacklog(e.a.pool.$client)).toBe(1); // the recording's delivery, still queued
    expect(await hasRecordingOnB(e)).toEqual({ true: 0, false: 1 });
    // Asked to leave the app's recordings alone meanwhile (the forwarder's pause), nothing is claimed.
    expect(await forwardDeliveries(e.b.pool.$client, e.b.target, { skipRecordingsOf: [e.appPk] })).toBe(0);

    await releaseSyncLease(e.b.state, e.appPk, "a-running-sync");
    expect(await forwardDeliveries(e.b.pool.$client, e.b.target)).toBe(1);
    expect(await forwardBacklog(e.a.pool.$client)).toBe(0);
    expect(await hasRecordingOnB(e)).toEqual({ true: 1, false: 0 });
    expect(await one(`SELECT count() AS n FROM ${t(e, "calls_v2")} WHERE session_id = 'held'`)).toBe(3);
    // Each delivery counted once, the deferred one too.
    expect(await one(`SELECT sum(c) AS n FROM (SELECT max(count) AS c FROM ${t(e, "event_counts")} GROUP BY app_pk, bucket_start, trigger)`)).toBe(2);
  }, 120_000);

  it("a forwarder's failure on server A is what server B reports, until any server forwards a batch", async () => {
    const e = await fresh();
    await send(e.a, e.appPk, messageSent(A, "m1", JAN));
    const failing: ForwardTarget = {
      ...e.a.target,
      writeDeliveries: async () => {
        throw new Error("ClickHouse insert failed: connect ECONNREFUSED http://default:secret@10.0.0.5:8123");
      },
    };
    const forwarderA = new PostgresForwarder(e.a.pool.$client, failing, { minBackoffMs: 60_000 });
    await expect(forwarderA.forwardOnce()).rejects.toThrow(/ECONNREFUSED/);
    const onB = await readForwardingBacklog(e.b.state);
    expect(onB).toMatchObject({ pending: 1, failures: 1, lastError: expect.stringMatching(/ECONNREFUSED/) });
    expect(onB.lastError).not.toMatch(/secret/);
    expect(onB.nextAttemptMs).toBeGreaterThan(Date.now());

    const before = Date.now();
    expect(await new PostgresForwarder(e.b.pool.$client, e.b.target).forwardOnce()).toBe(1);
    const onA = await readForwardingBacklog(e.a.state);
    expect(onA).toMatchObject({ pending: 0, failures: 0, lastError: null, nextAttemptMs: null });
    expect(onA.lastSuccessMs).toBeGreaterThanOrEqual(before);
  }, 120_000);
});
