import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { getCallClients, readCallClients } from "@/lib/analytics/clients";
import { clientSessionChange } from "@/lib/platform/client-session-facts";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { envelopeSchema, isLiveTrigger, parseLive, parseRecording, RECORDING_TRIGGER } from "../platform/webhook-envelope";
import { callInitiated, participantJoined, participantLeft, recordingGenerated, sessionEnded, sessionStarted, type Delivery } from "./test-deliveries";
import { liveKey, recordingKey } from "./keys";
import { storeDelivery, type IncomingDelivery } from "./postgres-inbox";
import { postJson, startHarness, type Harness } from "./test-harness";

process.env.LOG_LEVEL ??= "silent";

/**
 * The webhook inbox's per-delivery effects in a real Postgres (issue 26, decision 0035 §6):
 * a call's live state and who is in it, its participant sessions' clients, and recordings, written by two "servers" (two
 * pools), end as the SQLite ingest (a real one, over HTTP) leaves them for the same
 * deliveries — exactly when they arrive in the same order, and but for the order-dependent
 * audio_only flag when two servers take them at once in any order.
 */
describe.skipIf(POSTGRES_SKIP_REASON)("live state, participant sessions and recordings in the Postgres inbox, from two servers", () => {
  let postgres: TestPostgres;
  let serverA: pg.Pool;
  let serverB: pg.Pool;
  let sqliteIngest: Harness;
  let appPk: number;
  let stateDb: PgDb;

  beforeAll(async () => {
    [postgres, sqliteIngest] = await Promise.all([startPostgres(), startHarness()]);
    const url = await postgres.createDatabase("live_state");
    await migratePostgres(parsePostgresConfig(url));
    serverA = new pg.Pool({ connectionString: url, max: 4 });
    serverB = new pg.Pool({ connectionString: url, max: 4 });
    stateDb = openPostgres(parsePostgresConfig(url), { max: 2 });
    const app = await serverA.query<{ pk: string }>("INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('open-app', 'Open', 'eu', 'enc', '0002') RETURNING pk");
    appPk = Number(app.rows[0]!.pk);
  }, 120_000);
  afterAll(async () => {
    await serverA?.end();
    await serverB?.end();
    await stateDb?.$client.end();
    await sqliteIngest?.close();
    await postgres?.stop();
  });

  const A = { appId: "open-app" };

  /** What the ingest makes of a delivery (lib/ingest/ingest.ts prepareDelivery), for the Postgres inbox. */
  function incoming(payload: Delivery, receivedMs: number): IncomingDelivery {
    const env = envelopeSchema.parse(payload);
    const base = { appPk, trigger: env.trigger, webhook: env.webhook, type: env.type ?? null, outcome: "applied" as const, body: JSON.stringify(payload), receivedMs };
    if (env.trigger === RECORDING_TRIGGER) {
      const recording = parseRecording(env.data);
      return { ...base, idemKey: recordingKey(env, recording), sessionId: recording.sessionId, effect: { kind: "recording", recording } };
    }
    if (!isLiveTrigger(env.trigger)) throw new Error(`not a live trigger: ${env.trigger}`);
    const live = parseLive(env.trigger, env.type, env.data);
    const clients = clientSessionChange(appPk, env.trigger, live.sessionId, env.data, receivedMs);
    return { ...base, idemKey: liveKey(env, live), sessionId: live.sessionId, effect: { kind: "live", live }, clients };
  }

  /** A call with two people, one of whom leaves and comes back, then its end and recording. */
  function callOf(sessionId: string, t: number): Delivery[] {
    return [
      callInitiated(A, sessionId, t),
      sessionStarted(A, sessionId, t + 5),
      participantJoined(A, sessionId, { name: "alice", joined_at: t + 5 }),
      participantJoined(A, sessionId, { name: "bob", joined_at: t + 6, audio_call: "true" }),
      participantLeft(A, sessionId, { name: "bob", joined_at: t + 6, left_at: t + 60 }),
      participantJoined(A, sessionId, { name: "bob", joined_at: t + 70 }),
      sessionEnded(A, sessionId, t + 5, t + 300, [
        { name: "alice", joined_at: t + 5, left_at: t + 300 },
        { name: "bob", joined_at: t + 70 },
      ]),
      recordingGenerated(A, sessionId, t + 5),
    ];
  }

  type LiveRow = Record<string, unknown>;
  const SESSION_COLUMNS = "kind, status, initiator, receiver, receiver_type, initiated_at, started_at, ended_at";

  async function postgresState(sessionId: string): Promise<{ session: LiveRow; occupants: LiveRow[]; recordings: LiveRow[] }> {
    const session = await serverA.query(`SELECT ${SESSION_COLUMNS} FROM live_sessions WHERE app_pk = $1 AND session_id = $2`, [appPk, sessionId]);
    const occupants = await serverA.query(
      `SELECT o.name, o.joined_at, o.left_at, o.audio_only FROM live_occupants o JOIN live_sessions s ON s.pk = o.session_pk
       WHERE s.app_pk = $1 AND s.session_id = $2 ORDER BY o.name, o.joined_at`,
      [appPk, sessionId],
    );
    const recordings = await serverA.query("SELECT recording_url, start_time, duration FROM recordings WHERE app_pk = $1 AND session_id = $2", [appPk, sessionId]);
    const numbers = (r: LiveRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && /^-?\d+$/.test(v) && k !== "name" ? Number(v) : v]));
    return { session: numbers(session.rows[0]), occupants: occupants.rows.map(numbers), recordings: recordings.rows.map(numbers) };
  }

  function sqliteState(sessionId: string): { session: LiveRow; occupants: LiveRow[]; recordings: LiveRow[] } {
    const s = sqliteIngest.db.$client;
    const session = s.prepare(`SELECT ${SESSION_COLUMNS} FROM live_sessions WHERE app_pk = ? AND session_id = ?`).get(sqliteIngest.appPk.open, sessionId) as LiveRow;
    const occupants = (s.prepare(
      `SELECT o.name, o.joined_at, o.left_at, o.audio_only FROM live_occupants o JOIN live_sessions s ON s.pk = o.session_pk
       WHERE s.app_pk = ? AND s.session_id = ? ORDER BY o.name, o.joined_at`,
    ).all(sqliteIngest.appPk.open, sessionId) as LiveRow[]).map((o) => ({ ...o, audio_only: o.audio_only === null ? null : o.audio_only === 1 }));
    const recordings = s.prepare("SELECT recording_url, start_time, duration FROM recordings WHERE app_pk = ? AND session_id = ?").all(sqliteIngest.appPk.open, sessionId) as LiveRow[];
    return { session, occupants, recordings };
  }

  /** A call's participant sessions (client_sessions) but for their pk, change stamp and arrival time. */
  const CLIENT_COLUMNS = "occupant, joined_at, counted_at, left_at, trigger, platform, sdk, call_version, is_audio_only, audio_call, is_video_muted, start_recording_on_call_start";
  async function postgresClients(sessionId: string): Promise<LiveRow[]> {
    const rows = await serverA.query(`SELECT ${CLIENT_COLUMNS} FROM client_sessions WHERE app_pk = $1 AND session_id = $2 ORDER BY occupant, joined_at`, [appPk, sessionId]);
    // pg reads bigints as text: the integer columns back to numbers, the text columns as they are.
    const text = new Set(["occupant", "trigger", "platform", "sdk", "call_version"]);
    return rows.rows.map((r: LiveRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && !text.has(k) ? Number(v) : v])));
  }
  function sqliteClients(sessionId: string): LiveRow[] {
    return sqliteIngest.db.$client
      .prepare(`SELECT ${CLIENT_COLUMNS} FROM client_sessions WHERE app_pk = ? AND session_id = ? ORDER BY occupant, joined_at`)
      .all(sqliteIngest.appPk.open, sessionId) as LiveRow[];
  }

  it("one call's events alternating between two servers end exactly where the SQLite ingest does; repeats to both change nothing", async () => {
    const t = 1_767_225_600;
    const events = callOf("shared-call", t);
    // The reference: the SQLite ingest, in order, over HTTP.
    for (const e of events) expect((await postJson(sqliteIngest.baseUrl, "open-app", e, null)).status).toBe(200);

    // Postgres: in the same order, each event to the other server than the one before.
    for (const [i, e] of events.entries()) expect((await storeDelivery(i % 2 === 0 ? serverA : serverB, incoming(e, 1_767_225_600_000 + i))).repeat).toBe(false);
    const expected = sqliteState("shared-call");
    expect(expected.session).toMatchObject({ status: "ended", initiator: "alice" });
    expect(expected.occupants).toHaveLength(3);
    expect(await postgresState("shared-call")).toEqual(expected);
    // Its participant sessions (the clients report, the call's clients) too: three stays, each closed.
    const clients = sqliteClients("shared-call");
    expect(clients).toHaveLength(3);
    expect(clients.every((c) => c.left_at !== null)).toBe(true);
    expect(await postgresClients("shared-call")).toEqual(clients);
    expect(await readCallClients(stateDbOfPostgres(stateDb), appPk, "shared-call")).toEqual(getCallClients(sqliteIngest.db, sqliteIngest.appPk.open, "shared-call"));

    // Every event again, to both servers at once, in reverse: all repeats, nothing changes, nothing queued twice.
    const again = await Promise.all([...events].reverse().flatMap((e, i) => [serverA, serverB].map((server) => storeDelivery(server, incoming(e, 1_767_225_700_000 + i)))));
    expect(again.every((r) => r.repeat)).toBe(true);
    expect(await postgresState("shared-call")).toEqual(expected);
    expect(await postgresClients("shared-call")).toEqual(clients);
    const queued = await serverB.query<{ n: string }>("SELECT count(*) AS n FROM delivery_forward_queue q JOIN webhook_deliveries d ON d.pk = q.delivery_pk WHERE d.session_id = 'shared-call'");
    expect(Number(queued.rows[0]!.n)).toBe(events.length);
  });

  it("many calls spread over both servers at once converge one by one, and every delivery is stored once", async () => {
    const calls = Array.from({ length: 12 }, (_, i) => `call-${i}`);
    const all = calls.flatMap((id, i) => callOf(id, 1_767_300_000 + i * 1_000));
    for (const e of all) expect((await postJson(sqliteIngest.baseUrl, "open-app", e, null)).status).toBe(200);

    // Interleaved across calls and servers, each call's events in a scrambled order.
    const order = all.map((e, i) => ({ e, k: (i * 7919) % all.length })).sort((a, b) => a.k - b.k).map((x) => x.e);
    await Promise.all(order.map((e, i) => storeDelivery(i % 2 === 0 ? serverA : serverB, incoming(e, 1_767_400_000_000 + i))));

    // A stay's audio_only is what the last delivery received about it said (as on SQLite), so
    // it depends on the order of arrival; everything else merges to the same state in any order.
    const orderFree = (state: { session: LiveRow; occupants: LiveRow[]; recordings: LiveRow[] }) => ({
      ...state,
      occupants: state.occupants.map(({ audio_only: _arrivalOrdered, ...rest }) => rest),
    });
    for (const id of calls) expect(orderFree(await postgresState(id))).toEqual(orderFree(sqliteState(id)));
    // Participant sessions merge in any order too (a leave before its join takes its time from the live state).
    for (const id of calls) expect(await postgresClients(id)).toEqual(sqliteClients(id));
    // Every change took its own stamp, though two servers wrote at once.
    const stamps = await serverA.query<{ rows: string; stamps: string }>("SELECT count(*) AS rows, count(DISTINCT seq) AS stamps FROM client_sessions");
    expect(stamps.rows[0]!.stamps).toBe(stamps.rows[0]!.rows);
    const stored = await serverA.query<{ n: string; repeats: string }>(
      "SELECT count(*) AS n, coalesce(sum(repeat_count), 0) AS repeats FROM webhook_deliveries WHERE session_id LIKE 'call-%'",
    );
    expect({ n: Number(stored.rows[0]!.n), repeats: Number(stored.rows[0]!.repeats) }).toEqual({ n: all.length, repeats: 0 });
  });
});
