import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import {
  callInitiated, connectionChanged, envelope, messageSent, participantJoined, participantLeft, reactionAdded,
  recordingGenerated, sessionEnded, sessionStarted,
} from "./test-deliveries";
import { getEventCounts, getLiveSessions, getRecentDeliveries, ingestUrlFor } from "./queries";
import { handleWebhookRequest } from "./web";
import { AUTH, postJson, startHarness, type Harness } from "./test-harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const A = { appId: "acme" };
const one = <T>(q: ReturnType<typeof sql>) => h.db.get<T>(q);

/** What the sync does when it stores a call (lib/sync): has_recording = platform flag OR a webhook recording. */
function syncCall(appPk: number, sessionId: string, status = "ended", platformHasRecording = false): void {
  h.db.run(sql`INSERT INTO calls (app_pk, session_id, status, start_at, platform_has_recording, has_recording, source, first_seen_ms, updated_ms)
    VALUES (${appPk}, ${sessionId}, ${status}, 1700000000, ${platformHasRecording ? 1 : 0},
      ${platformHasRecording ? 1 : 0} OR EXISTS (SELECT 1 FROM recordings r WHERE r.app_pk = ${appPk} AND r.session_id = ${sessionId}),
      'sync', 0, 0)
    ON CONFLICT (app_pk, session_id) DO UPDATE SET status = excluded.status, has_recording = excluded.has_recording, source = 'sync'`);
}

describe("idempotency", () => {
  it("stores a delivery once and answers every repeat 200 without changing anything", async () => {
    const d = messageSent(A, "idem-1", 1_700_100_000);
    expect((await postJson(h.baseUrl, "acme", d)).json).toEqual({ status: "stored" });
    expect((await postJson(h.baseUrl, "acme", d)).json).toEqual({ status: "duplicate" });
    // Same JSON, other key order and spacing: the same event.
    const reordered = JSON.parse(JSON.stringify({ webhook: d.webhook, region: d.region, appId: d.appId, data: d.data, trigger: d.trigger })) as unknown;
    expect((await postJson(h.baseUrl, "acme", reordered)).json).toEqual({ status: "duplicate" });
    const row = one<{ n: number; repeats: number }>(sql`SELECT count(*) n, sum(repeat_count) repeats FROM webhook_deliveries WHERE idem_key LIKE '1700100000|message_sent|b:%' AND body LIKE '%idem-1%'`);
    expect(row).toEqual({ n: 1, repeats: 2 });
    const counted = one<{ c: number }>(sql`SELECT sum(count) c FROM event_counts WHERE trigger = 'message_sent' AND bucket_start = ${1_700_100_000 - (1_700_100_000 % 900)}`);
    expect(counted?.c).toBe(1);
  });

  it("keys a recording by webhook, sessionId and startTime, whether seconds or milliseconds", async () => {
    expect((await postJson(h.baseUrl, "acme", recordingGenerated(A, "rec-ms", "1700000000"))).json?.status).toBe("stored");
    expect((await postJson(h.baseUrl, "acme", recordingGenerated(A, "rec-ms", "1700000000000", "99"))).json?.status).toBe("duplicate");
    expect((await postJson(h.baseUrl, "acme", recordingGenerated(A, "rec-ms", 1_700_000_600))).json?.status).toBe("stored");
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM recordings WHERE session_id = 'rec-ms'`)?.n).toBe(2);
  });

  it("takes many concurrent deliveries and repeats, each counted once", async () => {
    const unique = Array.from({ length: 200 }, (_, i) => reactionAdded(A, `burst-${i}`, 1_700_200_000));
    const all = [...unique, ...unique.slice(0, 50)];
    const answers = await Promise.all(all.map((d) => postJson(h.baseUrl, "acme", d)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.json?.status === "stored")).toHaveLength(200);
    expect(one<{ c: number }>(sql`SELECT sum(count) c FROM event_counts WHERE trigger = 'message_reaction_added'`)?.c).toBe(200);
  });

  it("commits deliveries that arrive together in one transaction (group commit)", async () => {
    const before = { ...h.ingestor.committer.stats };
    const app = { pk: h.appPk.acme, appId: "acme" };
    const bodies = Array.from({ length: 150 }, (_, i) => Buffer.from(JSON.stringify(messageSent(A, `group-${i}`))));
    const results = await Promise.all([...bodies, ...bodies.slice(0, 10)].map((b) => h.ingestor.accept(app, b)));
    expect(results.map((r) => r.status)).toEqual(Array(160).fill(200));
    expect(results.filter((r) => (r.body as { status: string }).status === "duplicate")).toHaveLength(10);
    expect(h.ingestor.committer.stats.batches - before.batches).toBe(1);
    expect(h.ingestor.committer.stats.deliveries - before.deliveries).toBe(160);
  });

  it("stores and answers 200 a trigger it does not know", async () => {
    const res = await postJson(h.baseUrl, "acme", envelope(A, "poll_voted", { poll: { id: "p1" } }));
    expect(res.status).toBe(200);
    const row = one<{ outcome: string }>(sql`SELECT outcome FROM webhook_deliveries WHERE trigger = 'poll_voted'`);
    expect(row?.outcome).toBe("stored");
    const counts = getEventCounts(h.db, [h.appPk.acme], { from: 0, to: 2_000_000_000 });
    expect(counts.find((c) => c.trigger === "poll_voted")?.category).toBe("unknown");
  });

  it("accepts an app without Basic auth configured", async () => {
    const res = await postJson(h.baseUrl, "open-app", messageSent({ appId: "open-app" }, "o1"), null);
    expect(res.status).toBe(200);
  });
});

describe("recordings", () => {
  it("shows a recording for a call the sync has not brought yet, once it does", async () => {
    await postJson(h.baseUrl, "acme", recordingGenerated(A, "later-call", 1_700_000_000));
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM calls WHERE session_id = 'later-call'`)?.n).toBe(0);
    syncCall(h.appPk.acme, "later-call");
    expect(one<{ h: number }>(sql`SELECT has_recording h FROM calls WHERE session_id = 'later-call'`)?.h).toBe(1);
  });

  it("flags a call already stored at once", async () => {
    syncCall(h.appPk.acme, "synced-call");
    expect(one<{ h: number }>(sql`SELECT has_recording h FROM calls WHERE session_id = 'synced-call'`)?.h).toBe(0);
    await postJson(h.baseUrl, "acme", recordingGenerated(A, "synced-call", 1_700_000_000, "12.25"));
    expect(one<{ h: number }>(sql`SELECT has_recording h FROM calls WHERE session_id = 'synced-call'`)?.h).toBe(1);
    expect(one<{ d: number; s: number }>(sql`SELECT duration d, start_time s FROM recordings WHERE session_id = 'synced-call'`)).toEqual({ d: 12.25, s: 1_700_000_000 });
  });
});

describe("live state", () => {
  const now = Date.now();
  const t0 = Math.floor(now / 1000) - 120;

  it("follows a call from initiated to ongoing, with who is in it", async () => {
    for (const d of [
      callInitiated(A, "live-1", t0 - 5),
      sessionStarted(A, "live-1", t0),
      participantJoined(A, "live-1", { name: "Alice", joined_at: t0 }),
      participantJoined(A, "live-1", { name: "Bob", joined_at: (t0 + 2) * 1000 }), // milliseconds
      participantLeft(A, "live-1", { name: "Alice", joined_at: t0, left_at: t0 + 60 }),
      participantJoined(A, "live-1", { name: "Alice", joined_at: t0 + 70 }), // rejoin
    ]) {
      expect((await postJson(h.baseUrl, "acme", d)).status).toBe(200);
    }
    const [s] = (await getLiveSessions(h.db, [h.appPk.acme])).filter((x) => x.sessionId === "live-1");
    expect(s).toMatchObject({ kind: "call", status: "ongoing", initiator: "alice", receiver: "bob", initiatedAt: t0 - 5, startedAt: t0, endedAt: null, presentCount: 2 });
    expect(s.occupants).toEqual([
      { name: "Alice", joinedAt: t0, leftAt: t0 + 60, audioOnly: false },
      { name: "Bob", joinedAt: t0 + 2, leftAt: null, audioOnly: false },
      { name: "Alice", joinedAt: t0 + 70, leftAt: null, audioOnly: false },
    ]);
  });

  it("ends in the right state when call_ended arrives before call_started, and repeats", async () => {
    const ended = sessionEnded(A, "live-2", t0, t0 + 90, [{ name: "Carol", joined_at: t0 + 1, left_at: t0 + 90 }, { name: "Dan", joined_at: t0 + 3 }]);
    const order = [
      ended,
      participantLeft(A, "live-2", { name: "Carol", joined_at: t0 + 1, left_at: t0 + 90 }),
      sessionStarted(A, "live-2", t0),
      participantJoined(A, "live-2", { name: "Dan", joined_at: t0 + 3 }),
      participantJoined(A, "live-2", { name: "Carol", joined_at: t0 + 1 }),
      ended,
      sessionStarted(A, "live-2", t0),
    ];
    for (const d of order) expect((await postJson(h.baseUrl, "acme", d)).status).toBe(200);
    expect((await getLiveSessions(h.db, [h.appPk.acme])).some((x) => x.sessionId === "live-2")).toBe(false);
    const [s] = (await getLiveSessions(h.db, [h.appPk.acme], { endedWithinMs: 3_600_000 })).filter((x) => x.sessionId === "live-2");
    expect(s).toMatchObject({ status: "ended", startedAt: t0, endedAt: t0 + 90, presentCount: 0 });
    expect(s.occupants).toEqual([
      { name: "Carol", joinedAt: t0 + 1, leftAt: t0 + 90, audioOnly: false },
      { name: "Dan", joinedAt: t0 + 3, leftAt: t0 + 90, audioOnly: false },
    ]);
    const d = one<{ n: number; r: number }>(sql`SELECT count(*) n, sum(repeat_count) r FROM webhook_deliveries WHERE session_id = 'live-2'`);
    expect(d).toEqual({ n: 5, r: 2 });
  });

  it("keeps meetings apart from calls, and never writes live estimates into calls", async () => {
    await postJson(h.baseUrl, "acme", sessionStarted(A, "meet-1", t0, "meet"));
    await postJson(h.baseUrl, "acme", participantJoined(A, "meet-1", { name: "Eve", joined_at: t0 + 5, audio_call: "true" }, "meet"));
    const [m] = (await getLiveSessions(h.db, [h.appPk.acme])).filter((x) => x.sessionId === "meet-1");
    expect(m).toMatchObject({ kind: "meet", status: "ongoing", presentCount: 1 });
    expect(m.occupants[0].audioOnly).toBe(true);
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM calls WHERE session_id IN ('live-1', 'live-2', 'meet-1')`)?.n).toBe(0);
  });

  it("lets the sync's finished record replace the live estimate", async () => {
    await postJson(h.baseUrl, "acme", sessionStarted(A, "live-3", t0));
    expect((await getLiveSessions(h.db, [h.appPk.acme])).some((x) => x.sessionId === "live-3")).toBe(true);
    syncCall(h.appPk.acme, "live-3", "ended");
    expect((await getLiveSessions(h.db, [h.appPk.acme])).some((x) => x.sessionId === "live-3")).toBe(false);
  });

  it("shows nothing for apps not asked for", async () => {
    expect(await getLiveSessions(h.db, [h.appPk.open])).toEqual([]);
    expect(await getLiveSessions(h.db, [])).toEqual([]);
  });
});

describe("event counts", () => {
  it("counts chat triggers per day in the asked time zone, by the event's own time", async () => {
    const lateUtc = Date.UTC(2024, 0, 10, 20, 0) / 1000; // 01:30 next day in Kolkata
    await postJson(h.baseUrl, "acme", messageSent(A, "tz-1", lateUtc));
    await postJson(h.baseUrl, "acme", messageSent(A, "tz-2", lateUtc - 3600 * 10));
    await postJson(h.baseUrl, "acme", connectionChanged(A, "alice", lateUtc * 1000)); // ms timestamp
    const range = { from: Date.UTC(2024, 0, 9) / 1000, to: Date.UTC(2024, 0, 12) / 1000 };
    const utc = getEventCounts(h.db, [h.appPk.acme], range);
    expect(utc.filter((c) => c.trigger === "message_sent")).toEqual([{ appPk: h.appPk.acme, appId: "acme", day: "2024-01-10", trigger: "message_sent", category: "chat", count: 2 }]);
    const ist = getEventCounts(h.db, [h.appPk.acme], { ...range, tz: "Asia/Kolkata" });
    expect(ist.filter((c) => c.trigger === "message_sent").map((c) => [c.day, c.count])).toEqual([["2024-01-10", 1], ["2024-01-11", 1]]);
    expect(ist.find((c) => c.trigger === "user_connection_status_changed")?.day).toBe("2024-01-11");
    expect(() => getEventCounts(h.db, [h.appPk.acme], { ...range, tz: "Mars/Olympus" })).toThrow(/time zone/);
    expect(getEventCounts(h.db, [h.appPk.open], range)).toEqual([]);
  });

  it("counts joins and leaves delivered today on the day they happened (the occupant's joined_at / left_at)", async () => {
    // Replayed months later: without their own time, they would all land on the day they arrived.
    const joined = Date.UTC(2024, 1, 3, 23, 50) / 1000;
    await postJson(h.baseUrl, "acme", participantJoined(A, "replay-1", { name: "Ann", joined_at: joined }));
    await postJson(h.baseUrl, "acme", participantLeft(A, "replay-1", { name: "Ann", joined_at: joined, left_at: (joined + 1200) * 1000 }, "meet"));
    const days = getEventCounts(h.db, [h.appPk.acme], { from: Date.UTC(2024, 1, 1) / 1000, to: Date.UTC(2024, 1, 10) / 1000 })
      .filter((c) => c.trigger.includes("participant"))
      .map((c) => [c.day, c.trigger, c.count]);
    expect(days).toEqual([["2024-02-03", "call_participant_joined", 1], ["2024-02-04", "meeting_participant_left", 1]]);
  });
});

describe("recent deliveries", () => {
  it("lists accepted and refused deliveries newest first, without bodies", async () => {
    await postJson(h.baseUrl, "acme", messageSent(A, "refused"), "Basic bm9wZTpub3Bl");
    await new Promise((r) => setImmediate(r));
    const all = (await getRecentDeliveries(h.db, [h.appPk.acme], { limit: 5 }));
    expect(all).toHaveLength(5);
    expect(all[0]).toMatchObject({ kind: "rejected", status: 401, code: "unauthorized" });
    expect(JSON.stringify(all)).not.toMatch(/"body"/);
    const accepted = (await getRecentDeliveries(h.db, [h.appPk.acme], { outcome: "accepted", limit: 3 }));
    expect(accepted.every((d) => d.kind === "accepted")).toBe(true);
    expect((await getRecentDeliveries(h.db, [h.appPk.acme], { outcome: "stored" })).map((d) => d.trigger)).toEqual(["poll_voted"]);
    expect((await getRecentDeliveries(h.db, []))).toEqual([]);
  });
});

describe("apply failures", () => {
  it("stores a delivery whose effects fail, answers 200, and keeps the rest of the batch", async () => {
    h.ingestSqlite.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON main.recordings WHEN NEW.session_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`);
    try {
      const [bad, good] = await Promise.all([
        postJson(h.baseUrl, "acme", recordingGenerated(A, "boom", 1_700_000_000)),
        postJson(h.baseUrl, "acme", recordingGenerated(A, "fine", 1_700_000_000)),
      ]);
      expect([bad.status, good.status]).toEqual([200, 200]);
      expect(one<{ o: string }>(sql`SELECT outcome o FROM webhook_deliveries WHERE session_id = 'boom'`)?.o).toBe("failed");
      expect(one<{ n: number }>(sql`SELECT count(*) n FROM recordings WHERE session_id IN ('boom', 'fine')`)?.n).toBe(1);
      expect((await getRecentDeliveries(h.db, [h.appPk.acme], { outcome: "failed" }))).toHaveLength(1);
    } finally {
      h.ingestSqlite.exec("DROP TRIGGER temp.boom");
    }
  });
});

describe("the Next.js route path", () => {
  const url = (appId: string) => ingestUrlFor("http://localhost:3000/", appId);

  it("builds the ingest URL to paste into the platform", () => {
    expect(url("acme")).toBe("http://localhost:3000/api/webhooks/acme");
    expect(url("a b")).toBe("http://localhost:3000/api/webhooks/a%20b");
  });

  it("answers the same as the lean handler", async () => {
    const body = JSON.stringify(messageSent(A, "via-next"));
    const req = (init: RequestInit) => new Request(url("acme"), init);
    const ok = await handleWebhookRequest(req({ method: "POST", body, headers: { "content-type": "application/json", authorization: AUTH } }), "acme", h.ingestor);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "stored" });
    const again = await handleWebhookRequest(req({ method: "POST", body, headers: { "content-type": "application/json", authorization: AUTH } }), "acme", h.ingestor);
    expect(await again.json()).toEqual({ status: "duplicate" });
    const noAuth = await handleWebhookRequest(req({ method: "POST", body, headers: { "content-type": "application/json" } }), "acme", h.ingestor);
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers.get("www-authenticate")).toMatch(/^Basic/);
    const get = await handleWebhookRequest(req({ method: "GET" }), "acme", h.ingestor);
    expect(get.status).toBe(405);
    const big = await handleWebhookRequest(
      req({ method: "POST", body: new ReadableStream({ start(c) { c.enqueue(new Uint8Array(1024 * 1024 + 10)); c.close(); } }), headers: { "content-type": "application/json", authorization: AUTH }, duplex: "half" } as RequestInit),
      "acme",
      h.ingestor,
    );
    expect(big.status).toBe(413);
    const unknown = await handleWebhookRequest(req({ method: "POST", body, headers: { "content-type": "application/json" } }), "nobody", h.ingestor);
    expect(unknown.status).toBe(404);
  });
});

describe("housekeeping", () => {
  it("drops raw deliveries past retention (effects stay) and keeps the latest rejections per app", async () => {
    const app = { pk: h.appPk.open, appId: "open-app" };
    const old = Date.now() - 100 * 86_400_000;
    const res = await h.ingestor.accept(app, Buffer.from(JSON.stringify(messageSent({ appId: "open-app" }, "ancient", 1_600_000_000))), old);
    expect(res.status).toBe(200);
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM webhook_deliveries WHERE received_ms = ${old}`)?.n).toBe(1);
    const { GroupCommitter } = await import("./store");
    const c = new GroupCommitter(h.ingestSqlite, { keepRejections: 5, retainDeliveriesDays: 90 });
    for (let i = 0; i < 250; i++) c.noteRejection({ appPk: h.appPk.open, status: 401, code: "unauthorized", reason: "x", trigger: null, receivedMs: Date.now() });
    c.flush();
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM webhook_deliveries WHERE received_ms = ${old}`)?.n).toBe(0);
    expect(one<{ c: number }>(sql`SELECT sum(count) c FROM event_counts WHERE app_pk = ${h.appPk.open} AND bucket_start = ${1_600_000_000 - (1_600_000_000 % 900)}`)?.c).toBe(1);
    expect(one<{ n: number }>(sql`SELECT count(*) n FROM webhook_rejections WHERE app_pk = ${h.appPk.open}`)?.n).toBe(5);
    c.close();
  });
});

describe("durability modes", () => {
  it("answers only after the WAL fsync, one fsync shared by a batch", async () => {
    const app = { pk: h.appPk.acme, appId: "acme" };
    const syncer = (h.ingestor.committer as unknown as { syncer: { syncs: number } }).syncer;
    const before = syncer.syncs;
    const bodies = Array.from({ length: 50 }, (_, i) => Buffer.from(JSON.stringify(messageSent(A, `fsync-${i}`))));
    const results = await Promise.all(bodies.map((b) => h.ingestor.accept(app, b)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(syncer.syncs - before).toBe(1);
  });

  it("works the same with synchronous = FULL and no syncer", async () => {
    const full = await startHarness({ durability: "full" });
    try {
      const d = messageSent(A, "full-1");
      expect((await postJson(full.baseUrl, "acme", d)).json).toEqual({ status: "stored" });
      expect((await postJson(full.baseUrl, "acme", d)).json).toEqual({ status: "duplicate" });
      expect(full.ingestSqlite.pragma("synchronous", { simple: true })).toBe(2);
    } finally {
      await full.close();
    }
  });
});
