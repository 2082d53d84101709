import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { backfillClientSessions } from "@/db/backfills";
import { openDatabase, type Db } from "@/db/client";
import { filters, type Filters } from "@/lib/analytics/filters";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { rng } from "@/lib/analytics/test-fixtures";
import { createIngestor } from "./ingest";
import { envelope, participantJoined, participantLeft, sessionEnded, type Delivery } from "./test-deliveries";
import { startHarness, type Harness } from "./test-harness";

/**
 * `client_sessions`, the clients report's table (lib/ingest/client-sessions.ts), through
 * the real ingest into real SQLite files: one row per participant session however often
 * the platform repeats a join, left times from leaves and ends in any order, hostile
 * fields stored as null, rows that outlive the raw deliveries' retention, and the fill
 * of a warehouse whose joins were stored before the table existed.
 */
const T = 1_767_225_600; // 2026-01-01
const DAY = 86_400;

const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

async function harness(retainDeliveriesDays = 0): Promise<Harness> {
  const h = await startHarness({ retainDeliveriesDays, durability: "full" });
  harnesses.push(h);
  return h;
}

/** Sends one delivery through the ingest as received at `receivedMs`; returns its answer's status. */
async function deliver(h: Harness, app: "acme" | "open-app", body: Delivery | string, receivedMs: number): Promise<number> {
  const pk = app === "acme" ? h.appPk.acme : h.appPk.open;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return (await h.ingestor.accept({ pk, appId: app }, new TextEncoder().encode(text), receivedMs)).status;
}

interface Row {
  app_pk: number; session_id: string; occupant: string; joined_at: number | null; counted_at: number; left_at: number | null; trigger: string;
  platform: string | null; sdk: string | null; call_version: string | null; is_audio_only: number | null; audio_call: number | null;
  is_video_muted: number | null; start_recording_on_call_start: number | null; received_ms: number; seq: number;
}
const rowsOf = (db: Db): Row[] =>
  db.$client.prepare("SELECT * FROM client_sessions ORDER BY app_pk, session_id, occupant, ifnull(joined_at, -1)").all().map((r) => {
    const { pk: _pk, ...rest } = r as Row & { pk: number };
    return rest;
  });
const withoutSeq = (rows: Row[]) => rows.map(({ seq: _seq, ...r }) => r);

describe("client_sessions at ingest", () => {
  it("keeps one row per participant session: repeats, another webhook, leaves in any order, the end, hostile fields", async () => {
    const h = await harness();
    const acme = { appId: "acme" };
    const ms = (s: number) => s * 1000 + 250;
    // Ann joins; the platform repeats it, and a second webhook of the app delivers it too.
    expect(await deliver(h, "acme", participantJoined(acme, "s1", { name: "Ann", joined_at: T }), ms(T + 1))).toBe(200);
    const [first] = rowsOf(h.db);
    expect(await deliver(h, "acme", participantJoined(acme, "s1", { name: "Ann", joined_at: T }), ms(T + 30))).toBe(200);
    expect(await deliver(h, "acme", participantJoined({ ...acme, webhook: "wh-second" }, "s1", { name: "Ann", joined_at: T * 1000 }), ms(T + 31))).toBe(200);
    expect(rowsOf(h.db)).toEqual([first]);
    expect(first).toMatchObject({ occupant: "Ann", joined_at: T, counted_at: T, left_at: null, platform: "web", sdk: "web", call_version: "4", is_audio_only: 0, audio_call: 0, is_video_muted: 0, start_recording_on_call_start: 0, received_ms: ms(T + 1) });

    // She leaves (its stamp moves on, for the forwarder), rejoins: a second session, which the end closes.
    await deliver(h, "acme", participantLeft(acme, "s1", { name: "Ann", joined_at: T, left_at: T + 90 }), ms(T + 91));
    await deliver(h, "acme", participantJoined(acme, "s1", { name: "Ann", joined_at: T + 100 }), ms(T + 101));
    // Bob's leave arrives before his join; Cy's join and leave say no joined_at.
    await deliver(h, "acme", participantLeft(acme, "s1", { name: "Bob", joined_at: T + 5, left_at: T + 60 }), ms(T + 61));
    await deliver(h, "acme", participantJoined(acme, "s1", { name: "Bob", joined_at: T + 5, audio_call: "true" }), ms(T + 62));
    await deliver(h, "acme", envelope(acme, "call_participant_joined", { sessionId: "s1", occupant: { name: "Cy" }, initial_config: { platform: "iOS " } }, "call"), ms(T + 7));
    await deliver(h, "acme", envelope(acme, "call_participant_left", { sessionId: "s1", occupant: { name: "Cy", left_at: T + 70 } }, "call"), ms(T + 71));
    await deliver(h, "acme", sessionEnded(acme, "s1", T, T + 200, [{ name: "Ann", joined_at: T + 100 }]), ms(T + 201));
    // Hostile values: wrong types everywhere; stored, answered 200, nulls where nothing can be read
    // (an array or object as its JSON text, as the report always read it).
    const hostile = { sessionId: "s2", occupant: { name: "Dee", joined_at: "yesterday", audio_call: { x: 1 } }, initial_config: { platform: 42, sdk: ["web"], call_version: true, is_audio_only: "maybe", is_video_muted: 1, start_recording_on_call_start: null } };
    expect(await deliver(h, "acme", envelope(acme, "meeting_participant_joined", hostile, "meet"), ms(T + 300))).toBe(200);
    expect(await deliver(h, "acme", envelope(acme, "call_participant_joined", { sessionId: "s3", occupant: { name: { first: "Eve" } }, initial_config: "web" }, "call"), ms(T + 400))).toBe(200);
    // A join the ingest refuses (no occupant object: 422) is not stored, so it counts nowhere.
    expect(await deliver(h, "acme", envelope(acme, "call_participant_joined", { sessionId: "s4", occupant: "Fay" }, "call"), ms(T + 500))).toBe(422);

    const rows = rowsOf(h.db);
    const pick = (session: string, occupant: string) => rows.filter((r) => r.session_id === session && r.occupant === occupant);
    expect(pick("s1", "Ann").map((r) => [r.joined_at, r.left_at])).toEqual([[T, T + 90], [T + 100, T + 200]]);
    expect(pick("s1", "Ann")[0].seq).toBeGreaterThan(first.seq);
    expect(pick("s1", "Bob")).toMatchObject([{ joined_at: T + 5, left_at: T + 60, audio_call: 1 }]);
    expect(pick("s1", "Cy")).toMatchObject([{ joined_at: null, counted_at: T + 7, left_at: T + 70, platform: "ios", sdk: null, is_audio_only: null }]);
    expect(pick("s2", "Dee")).toMatchObject([{ trigger: "meeting_participant_joined", joined_at: null, counted_at: T + 300, platform: "42", sdk: '["web"]', call_version: "1", is_audio_only: null, audio_call: null, is_video_muted: 1, start_recording_on_call_start: null }]);
    expect(pick("s3", "")).toMatchObject([{ joined_at: null, platform: null }]);
    expect(rows.filter((r) => r.session_id === "s4")).toEqual([]);
    expect(new Set(rows.map((r) => r.seq)).size).toBe(rows.length);
    const outcomes = h.db.$client.prepare("SELECT DISTINCT outcome FROM webhook_deliveries").pluck().all();
    expect(outcomes).toEqual(["applied"]);
  });

  it("counts a session in the clients report, and on its call's page, long after its delivery was pruned", async () => {
    const h = await harness(90);
    const now = Math.floor(Date.now() / 1000);
    const old = now - 200 * DAY;
    for (let i = 0; i < 6; i++) {
      const j = envelope({ appId: "acme" }, "call_participant_joined", { sessionId: `old-${i % 3}`, occupant: { name: `p${i}`, joined_at: old + i }, initial_config: { platform: i % 2 ? "android" : "web", sdk: "web", call_version: "4" } }, "call");
      expect(await deliver(h, "acme", j, (old + i + 5) * 1000)).toBe(200);
    }
    // A fresh ingest (as after a restart) prunes after its first batch: deliveries older than 90 days go.
    const restarted = createIngestor(h.ingestSqlite, { retainDeliveriesDays: 90 });
    const fresh = participantJoined({ appId: "acme" }, "new", { name: "q", joined_at: now });
    expect((await restarted.accept({ pk: h.appPk.acme, appId: "acme" }, new TextEncoder().encode(JSON.stringify(fresh)), Date.now())).status).toBe(200);
    restarted.close();
    expect(h.db.$client.prepare("SELECT count(*) FROM webhook_deliveries WHERE session_id LIKE 'old-%'").pluck().get()).toBe(0);
    const report = await createMemoryEngine({ db: () => h.db }).report("clients", filters({ from: old - DAY, to: old + DAY }), { appPks: "all" });
    expect(report.data.filter((r) => r.dimension === "platform")).toEqual([
      { app: "acme", dimension: "platform", value: "android", sessions: 3, calls: 3, share: 0.5 },
      { app: "acme", dimension: "platform", value: "web", sessions: 3, calls: 3, share: 0.5 },
    ]);
    // The call's page still says what each joined with; its raw events are gone.
    h.db.$client.prepare(`INSERT INTO calls (app_pk, session_id, type, status, start_at, platform_has_recording, has_recording, source, first_seen_ms, updated_ms)
      VALUES (?, 'old-1', 'video', 'ended', ?, 0, 0, 'sync', 0, 0)`).run(h.appPk.acme, old);
    const call = await createMemoryEngine({ db: () => h.db }).call({ app: "acme", sessionId: "old-1" }, { appPks: "all" });
    expect(call.events).toEqual([]);
    expect(call.clients).toEqual([
      { occupant: "p1", joinedAt: old + 1, leftAt: null, platform: "android", sdk: "web 4", media: "unknown", videoMuted: "unknown" },
      { occupant: "p4", joinedAt: old + 4, leftAt: null, platform: "web", sdk: "web 4", media: "unknown", videoMuted: "unknown" },
    ]);
  });
});

describe("client_sessions filled from joins stored before the table existed", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A copy of db/migrations that stops before 0019: a warehouse as the previous release left it. */
  function migrationsBefore0019(dir: string): string {
    const folder = path.join(dir, "migrations");
    mkdirSync(path.join(folder, "meta"), { recursive: true });
    const journal = JSON.parse(readFileSync("db/migrations/meta/_journal.json", "utf8")) as { entries: Array<{ idx: number; tag: string }> };
    journal.entries = journal.entries.filter((e) => e.idx < 19);
    writeFileSync(path.join(folder, "meta", "_journal.json"), JSON.stringify(journal));
    for (const f of readdirSync("db/migrations").filter((f) => f.endsWith(".sql"))) copyFileSync(path.join("db/migrations", f), path.join(folder, f));
    return folder;
  }

  it("holds what the ingest would have written, and the report answers as it does on the ingest's rows", async () => {
    // The deliveries, sent through today's ingest: what the table must hold.
    const h = await harness();
    const r = rng(17);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    for (let i = 0; i < 400; i++) {
      const app = r() < 0.6 ? "acme" : "open-app";
      const session = `b-${Math.floor(i / 4)}`;
      const at = T + i * 900;
      const config = { platform: pick(["web", "Android", " ios", undefined, 7]), sdk: pick(["web", "android", undefined]), call_version: pick(["4", 3, undefined]), is_audio_only: pick(["true", "false", true, undefined, "x"]), is_video_muted: pick(["true", "false", 0]) };
      const occupant = { name: `u${i % 30}`, ...(i % 9 === 0 ? {} : { joined_at: i % 5 ? at : at * 1000 }), audio_call: pick(["true", "false"]) };
      const join = envelope({ appId: app }, i % 6 ? "call_participant_joined" : "meeting_participant_joined", { sessionId: session, occupant, initial_config: config }, i % 6 ? "call" : "meet");
      const leave = participantLeft({ appId: app }, session, { name: occupant.name, joined_at: at, left_at: at + 300 }, i % 6 ? "call" : "meet");
      // Some leaves come first, some joins repeat, a few bodies are pretty-printed.
      if (i % 7 === 3) await deliver(h, app, leave, (at + 301) * 1000);
      await deliver(h, app, i % 10 === 1 ? JSON.stringify(join, null, 2) : join, (at + 2) * 1000);
      if (i % 11 === 0) await deliver(h, app, join, (at + 40) * 1000);
      if (i % 7 !== 3 && i % 2 === 0) await deliver(h, app, leave, (at + 301) * 1000);
      if (i % 4 === 3) await deliver(h, app, sessionEnded({ appId: app }, session, at, at + 900, [{ name: occupant.name, joined_at: at }]), (at + 901) * 1000);
    }
    const want = rowsOf(h.db);
    expect(want.length).toBeGreaterThan(300);
    expect(want.filter((x) => x.left_at !== null).length).toBeGreaterThan(100);

    // A warehouse of the previous release holding the same deliveries and live state.
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-backfill-"));
    dirs.push(dir);
    const file = path.join(dir, "old.db");
    const old = new Database(file);
    migrate(drizzle(old), { migrationsFolder: migrationsBefore0019(dir) });
    expect(old.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'client_sessions'").pluck().get()).toBe(0);
    old.exec(`ATTACH DATABASE '${h.file.replaceAll("'", "''")}' AS fed`);
    for (const t of ["apps", "webhook_deliveries", "live_sessions", "live_occupants"]) old.exec(`INSERT INTO main.${t} SELECT * FROM fed.${t}`);
    old.exec("DETACH DATABASE fed");
    old.close();

    // Opening it migrates and fills the table.
    const db = openDatabase(file);
    try {
      expect(withoutSeq(rowsOf(db))).toEqual(withoutSeq(want));
      expect(db.$client.prepare("SELECT count(*) FROM warehouse_backfills").pluck().get()).toBe(0);
      const cases: Array<Partial<Filters>> = [{}, { apps: ["acme"] }, { from: T + 50 * 900, to: T + 250 * 900 }];
      for (const c of cases) {
        const f = filters(c);
        const fromIngest = await createMemoryEngine({ db: () => h.db }).report("clients", f, { appPks: "all" });
        expect(fromIngest.data.length).toBeGreaterThan(8);
        expect(await createMemoryEngine({ db: () => db }).report("clients", f, { appPks: "all" }), JSON.stringify(c)).toEqual(fromIngest);
      }
      // Run again (another process, a restart half way): in small batches, it changes nothing.
      const before = rowsOf(db);
      db.$client.prepare("INSERT INTO warehouse_backfills (name, after_pk, upto_pk) SELECT 'client_sessions', 0, max(pk) FROM webhook_deliveries").run();
      expect(backfillClientSessions(db.$client, 7)).toBeGreaterThan(300);
      expect(rowsOf(db)).toEqual(before);
      expect(db.$client.prepare("SELECT count(*) FROM warehouse_backfills").pluck().get()).toBe(0);
    } finally {
      db.$client.close();
    }
  });
});
