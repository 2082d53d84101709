import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

process.env.AUTH_SECRET ??= "unit-test-secret-at-least-32-characters-long";
process.env.LOG_LEVEL ??= "silent";

const { openDatabase } = await import("@/db/client");
const { addApp, getAppById, getAppByIdSync, removeApp, AppRegistryError } = await import("@/lib/apps/registry");
const { syncApp } = await import("./sync-app");
type Db = ReturnType<typeof openDatabase>;

/**
 * The sync's own rules against a tiny in-test platform: webhook rows replaced, recording
 * flags merged, ongoing calls refreshed (404 recorded), the early stop only when the
 * order allows it, and the lock's lease.
 */
type Rec = Record<string, unknown>;
let records: Rec[] = [];
let singles = new Map<string, Rec>();
let server: Server;
let callsUrl = "";

const call = (i: number, extra: Rec = {}): Rec => ({
  sessionId: `s${i}`,
  type: "audio",
  mode: "call",
  status: "ended",
  initiator: "a",
  receiver: "b",
  receiverType: "user",
  initiatedAt: 1_700_000_000 + i * 60,
  startedAt: 1_700_000_000 + i * 60 + 2,
  endedAt: 1_700_000_000 + i * 60 + 50,
  hasRecording: false,
  totalAudioMinutes: 1,
  totalVideoMinutes: 0,
  totalDurationInMinutes: 0.8,
  totalDuration: "00:00:48",
  totalParticipants: 2,
  participants: [
    { uid: "a", state: "ended", isJoined: true, totalAudioMinutes: 0.5, totalVideoMinutes: 0, totalDuration: 0.8, deviceId: "d1", joinedAt: 1, leftAt: 2, mid: "m" },
    { uid: "b", state: "ended", isJoined: true, totalAudioMinutes: 0.5, totalVideoMinutes: 0, totalDuration: 0.8, deviceId: "d2", joinedAt: 1, leftAt: 2, mid: "m" },
  ],
  ...extra,
});

/** Newest first, like the platform's examples. */
const newestFirst = (n: number) => Array.from({ length: n }, (_, k) => call(n - k));

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    res.setHeader("content-type", "application/json");
    const m = /^\/v3\/calls\/(.+)$/.exec(u.pathname);
    if (m) {
      const rec = singles.get(decodeURIComponent(m[1]));
      res.statusCode = rec ? 200 : 404;
      return res.end(JSON.stringify(rec ? { data: rec } : { error: { code: "ERR_CALL_NOT_FOUND", message: "no such call" } }));
    }
    const page = Number(u.searchParams.get("page") ?? 1);
    const per = Number(u.searchParams.get("perPage") ?? 100);
    const data = records.slice((page - 1) * per, page * per);
    res.end(JSON.stringify({ data, meta: { pagination: { total: records.length, count: data.length, current_page: page, total_pages: Math.ceil(records.length / per) } } }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  callsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

let db: Db;
let dir = "";
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "callboard-sync-unit-"));
  db = openDatabase(path.join(dir, "w.db"));
  await addApp(db, { appId: "unit", name: "unit", region: "us", apiKey: "unit-key-1234", callsUrl });
  records = [];
  singles = new Map();
});

afterEach(() => {
  db.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

const app = () => getAppByIdSync(db, "unit")!;
const sync = (opts: { full?: boolean; perPage?: number } = {}) => syncApp(db, app(), { trigger: "test", perPage: opts.perPage ?? 10, full: opts.full, client: { timeoutMs: 1000, maxAttempts: 2 } });
const row = (sessionId: string) =>
  db.$client.prepare("SELECT * FROM calls WHERE session_id = ?").get(sessionId) as Record<string, unknown> | undefined;

describe("syncApp rules", () => {
  it("replaces a webhook estimate with the sync's record and keeps a webhook recording flag", async () => {
    const s = db.$client;
    s.prepare("INSERT INTO calls (app_pk, session_id, start_at, source, status, first_seen_ms, updated_ms) VALUES (?, 's1', 1, 'webhook', 'ongoing', 0, 0)").run(app().pk);
    s.prepare("INSERT INTO call_participants (call_pk, app_pk, seq, uid, state) SELECT pk, app_pk, 0, 'ghost', 'ended' FROM calls WHERE session_id = 's1'").run();
    s.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, received_ms) VALUES (?, 's2', 'https://r/2', 0)").run(app().pk);
    records = newestFirst(3);
    const r = await sync();
    expect(r).toMatchObject({ status: "succeeded", inserted: 2, updated: 1 });
    expect(row("s1")).toMatchObject({ source: "sync", status: "ended" });
    expect(s.prepare("SELECT uid FROM call_participants p JOIN calls c ON c.pk = p.call_pk WHERE c.session_id = 's1' ORDER BY seq").pluck().all()).toEqual(["a", "b"]);
    expect(row("s2")).toMatchObject({ has_recording: 1, platform_has_recording: 0 });
    expect(row("s3")).toMatchObject({ has_recording: 0 });
    // Unknown participant keys are kept on the participant row.
    records = [call(4, { participants: [{ uid: "z", state: "unanswered", isJoined: false, platform: "web" }] })];
    await sync({ full: true });
    expect(s.prepare("SELECT p.raw FROM call_participants p JOIN calls c ON c.pk = p.call_pk WHERE c.session_id = 's4'").pluck().get()).toBe('{"platform":"web"}');
  });

  it("writes a call that changed between two pages of one run once per version, the later last", async () => {
    // s3 shows up again two pages later with a third participant (it changed while the
    // run paged): both versions are written in the same batch and the later one wins.
    const later = call(3, { totalParticipants: 3, participants: [...(call(3).participants as Rec[]), { uid: "c", state: "ended", isJoined: true, totalAudioMinutes: 0.2 }] });
    records = [call(4), call(3), call(2), call(1), later];
    const r = await sync({ perPage: 2 });
    expect(r).toMatchObject({ status: "succeeded", inserted: 4, updated: 1, skipped: 0 });
    expect(db.$client.prepare("SELECT uid FROM call_participants p JOIN calls c ON c.pk = p.call_pk WHERE c.session_id = 's3' ORDER BY seq").pluck().all()).toEqual(["a", "b", "c"]);
    expect(row("s3")).toMatchObject({ total_participants: 3 });
    records = [call(4), later, call(2), call(1)]; // the platform's settled list
    expect(await sync({ full: true, perPage: 2 })).toMatchObject({ inserted: 0, updated: 0, unchanged: 4, skipped: 0 });
  });

  it("refreshes stored ongoing calls the list did not bring, and records a 404 without failing", async () => {
    records = [call(3), call(2, { status: "ongoing", endedAt: undefined }), call(1, { status: "ongoing", endedAt: undefined })];
    await sync();
    expect(row("s2")).toMatchObject({ status: "ongoing" });
    records = [call(3)];
    singles.set("s2", call(2));
    const r = await sync();
    expect(r).toMatchObject({ status: "succeeded", refreshed: 1, refreshMissing: 1, skipped: 0 });
    expect(row("s2")).toMatchObject({ status: "ended" });
    expect(row("s1")).toMatchObject({ status: "ongoing" });
    expect(r.skippedRecords).toEqual([{ sessionId: "s1", reason: expect.stringMatching(/no longer knows.*404/) }]);
  });

  it("stops early on a full page of known calls only when the results are newest first", async () => {
    records = newestFirst(50);
    expect(await sync()).toMatchObject({ kind: "full", inserted: 50, pages: 5 });
    records = [call(53), call(52), call(51), ...records];
    const inc = await sync();
    expect(inc).toMatchObject({ kind: "incremental", inserted: 3, stoppedEarly: true });
    expect(inc.pages).toBe(2);
    // Oldest first: the order check fails on the first page, so everything is paged.
    records = [...records].reverse();
    const all = await sync();
    expect(all).toMatchObject({ kind: "incremental", stoppedEarly: false, pages: 6, unchanged: 53 });
    // A full reconcile on demand.
    expect(await sync({ full: true })).toMatchObject({ kind: "full", pages: 6, stoppedEarly: false });
  });

  it("dedupes a call that shows up twice when pages shift", async () => {
    records = [call(3), call(2), call(2), call(1)];
    const r = await sync({ perPage: 2 });
    expect(r).toMatchObject({ inserted: 3, fetched: 4 });
  });

  it("respects a live lease, takes over an expired one and marks the dead run interrupted", async () => {
    records = newestFirst(5);
    const s = db.$client;
    const pk = app().pk;
    s.prepare("INSERT INTO sync_runs (app_pk, kind, trigger, status, started_ms) VALUES (?, 'full', 'test', 'running', 1)").run(pk);
    s.prepare("INSERT INTO sync_locks (app_pk, owner, acquired_ms, expires_ms) VALUES (?, 'elsewhere:1:ab', 1, ?)").run(pk, Date.now() + 60_000);
    const busy = await sync();
    expect(busy.status).toBe("already_running");
    expect(busy.error).toMatch(/already running.*elsewhere:1:ab/);
    s.prepare("UPDATE sync_locks SET expires_ms = ? WHERE app_pk = ?").run(Date.now() - 1, pk);
    const r = await sync();
    expect(r.status).toBe("succeeded");
    const runs = s.prepare("SELECT status, error FROM sync_runs ORDER BY pk").all() as Array<{ status: string; error: string | null }>;
    expect(runs[0]).toMatchObject({ status: "failed", error: expect.stringMatching(/interrupted/) });
    expect(s.prepare("SELECT count(*) FROM sync_locks").pluck().get()).toBe(0);
  });

  it("does not remove an app while a sync of it holds the lock", async () => {
    records = newestFirst(3);
    expect(await sync()).toMatchObject({ status: "succeeded", inserted: 3 });
    const s = db.$client;
    s.prepare("INSERT INTO sync_locks (app_pk, owner, acquired_ms, expires_ms) VALUES (?, 'elsewhere:1:ab', 1, ?)").run(app().pk, Date.now() + 60_000);
    let refused: unknown;
    try {
      await removeApp(db, "unit");
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(AppRegistryError);
    expect(refused).toMatchObject({ code: "conflict", message: expect.stringMatching(/"unit" is being synced/) });
    expect(s.prepare("SELECT count(*) FROM calls").pluck().get()).toBe(3);
    s.prepare("UPDATE sync_locks SET expires_ms = ? WHERE app_pk = ?").run(Date.now() - 1, app().pk); // the sync went away
    await removeApp(db, "unit");
    expect(await getAppById(db, "unit")).toBeUndefined();
    expect(s.prepare("SELECT (SELECT count(*) FROM calls) + (SELECT count(*) FROM sync_locks)").pluck().get()).toBe(0);
  });

  it("skips bad records and still syncs the rest", async () => {
    records = [call(3), { sessionId: "bad", initiatedAt: "soon" }, { type: "audio" }, call(1)];
    const r = await sync();
    expect(r).toMatchObject({ status: "succeeded", inserted: 2, skipped: 2 });
    expect(r.skippedRecords.map((x) => x.reason)).toEqual([expect.stringMatching(/^initiatedAt: expected a number/), "sessionId: missing"]);
    expect(r.skippedRecords[0].sessionId).toBe("bad");
  });
});

describe("syncApp and the warehouse", () => {
  it.each(["worker", "inline"] as const)("skips a record the database refuses instead of failing the run (%s writer)", async (writer) => {
    db.$client.exec("CREATE TRIGGER test_refuse BEFORE INSERT ON calls WHEN new.session_id = 's2' BEGIN SELECT RAISE(ABORT, 'refused for the test'); END");
    records = newestFirst(3);
    const r = await syncApp(db, app(), { trigger: "test", perPage: 10, writer });
    expect(r).toMatchObject({ status: "succeeded", inserted: 2, skipped: 1 });
    expect(r.skippedRecords[0]).toEqual({ sessionId: "s2", reason: expect.stringMatching(/refused for the test/) });
  });
});

describe("raw records", () => {
  // The sync thread hashes each record in the page's bytes and the write side decodes it
  // (from the worker's copy of the page, or inline): what is stored must be the record's
  // text exactly as sent, hashed as that text, whichever writer and whatever the page's
  // size (a small body shares Node's buffer pool and is copied to the worker, a large one
  // is handed over).
  const sha1 = (text: string) => createHash("sha1").update(text, "utf8").digest("base64url");
  const stored = () => db.$client.prepare("SELECT session_id id, raw, content_hash hash FROM calls ORDER BY session_id").all() as Array<{ id: string; raw: string; hash: string }>;

  it.each([
    ["worker", 3],
    ["worker", 60],
    ["inline", 60],
  ] as const)("stores each record's text as sent and its hash (%s writer, %i calls)", async (writer, n) => {
    records = newestFirst(n).map((r, i) =>
      i % 3 === 0 ? { ...r, participants: [{ uid: `jürgen.ß${i}`, state: "ended", isJoined: true, note: "naïve — ✓" }] } : r,
    );
    const r = await syncApp(db, app(), { trigger: "test", perPage: 50, writer });
    expect(r).toMatchObject({ status: "succeeded", inserted: n, skipped: 0 });
    const want = new Map(records.map((rec) => [String(rec.sessionId), JSON.stringify(rec)]));
    const rows = stored();
    expect(rows).toHaveLength(n);
    for (const row of rows) {
      expect(row.raw).toBe(want.get(row.id));
      expect(row.hash).toBe(sha1(row.raw));
    }
    expect(db.$client.prepare("SELECT uid FROM call_participants WHERE uid LIKE 'jürgen%' ORDER BY uid LIMIT 1").pluck().get()).toBe("jürgen.ß0");
    // Hashed the same way again: a second pass finds every call unchanged.
    expect(await syncApp(db, app(), { trigger: "test", perPage: 50, full: true, writer })).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: n });
  });
});
