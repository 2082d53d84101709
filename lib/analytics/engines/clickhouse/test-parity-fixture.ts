/**
 * Test support of the parity suite: one SQLite warehouse filled by real syncs from the
 * emulator over HTTP, changed the ways a live warehouse changes (calls re-synced with new
 * values, calls that lost participants, calls changed several times, starts moved across a
 * month boundary, recordings from webhooks, odd uids, a removed app, deleted calls), and copied into every ClickHouse target by the copy command — the same
 * facts on both sides, so that both engines must give the same answers.
 */
import { openDatabase, type Db } from "@/db/client";
import { addApp, getAppById, removeApp } from "@/lib/apps/registry";
import type { ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { CallWriterV2 } from "@/lib/clickhouse/writer-v2";
import { spawnEmulator } from "@/lib/emulator/test-emulator";
import { syncApp } from "@/lib/sync";
import { tempDbFile, writeCalls, type FixtureCall } from "@/lib/analytics/test-fixtures";
import { sendCallDeliveries } from "./test-parity-deliveries";

/** 2026-04-15T00:00Z: eight months of history cover the autumn DST ends and the March 2026 starts. */
export const NOW = 1_776_211_200;

/**
 * The start second of a run of missed calls in two apps (0 minutes, 0 seconds, no one
 * joined), written in two rounds, each round's session ids descending while SQLite
 * numbers them ascending: their order is their arrival (the pk), which neither the app
 * nor the session id gives. The newest start of the warehouse, so the run crosses the
 * calls list's first page edges (start, desc) and its last ones (asc).
 */
export const TIE_START = NOW + 3 * 3600;

/** 2026-02-01T00:00Z: calls of the fixture move their start back and forth across it (a month boundary). */
export const MONTH_EDGE = 1_769_904_000;

/** uids beyond the emulator's own hostile ones: SQL quoting, escapes, NUL, control and combining characters. */
export const ODD_UIDS = ["o'brien\\'; DROP TABLE calls; --", "nul\u0000byte", "back\\\\slash\\", "100%_like", "del\u007fchar", "👩‍👩‍👧 family", "e\u0301clair", "  spaced  "];

export interface Warehouse {
  db: Db;
  /** Calls re-synced with other values, or that lost participants after the first copy. */
  changed: Array<{ app: string; sessionId: string }>;
  /** Calls deleted (in SQLite; cancel rows in ClickHouse). */
  deleted: Array<{ app: string; sessionId: string }>;
  /** Calls changed three times after the second copy, a copy after each; the first three moved across MONTH_EDGE each time. */
  changedSeveralTimes: Array<{ app: string; sessionId: string }>;
  /** The app removed after the copy (its facts stay in ClickHouse, invisible). */
  removedApp: string;
  /** Webhook deliveries stored before the first copy, and between the two. */
  deliveries: { first: number; later: number };
  /** Rows the second copy wrote per table (the re-synced and changed ones, and the new). */
  secondCopy: Record<string, number>;
  stop(): Promise<void>;
}

async function syncAll(db: Db, appIds: string[]): Promise<void> {
  for (const appId of appIds) {
    const s = await syncApp(db, (await getAppById(db, appId))!, { trigger: "test" });
    if (s.status !== "succeeded") throw new Error(`sync of ${appId}: ${s.status}`);
  }
}

/** Each cluster target's schema v2 writer (its shards' clients); a target without a cluster makes its own. */
type V2Writers = ReadonlyMap<ClickHouse, CallWriterV2>;

/** Copies into every target (schema v2 through its writer: a cluster's needs every shard's client); returns the rows the last one copied, per table. */
const copyAll = async (db: Db, targets: ClickHouse[], writers: V2Writers) => {
  const copied: Record<string, number> = {};
  for (const ch of targets) for (const c of await copyToClickHouse(db, ch, { batchSize: 500, writerV2: writers.get(ch) })) copied[c.table] = c.copied;
  return copied;
};

/** Builds the warehouse and copies it into every target (already migrated). */
export async function buildWarehouse(targets: ClickHouse[], writers: V2Writers = new Map()): Promise<Warehouse> {
  const apps = [
    { appId: "alpha", count: 1400, region: "in" as const },
    { appId: "beta", count: 500, region: "eu" as const },
    { appId: "gamma", count: 150, region: "us" as const },
  ];
  const emu = await spawnEmulator({ seed: 13, now: NOW, months: 8, apps });
  const file = tempDbFile("ch-parity");
  const db = openDatabase(file);
  for (const a of emu.apps) await addApp(db, { appId: a.appId, name: `${a.appId} app`, region: a.region, apiKey: a.apiKey, callsUrl: a.callsUrl });
  const ids = emu.apps.map((a) => a.appId);
  await syncAll(db, ids);
  writeTies(db, "tie", 70);
  // Webhooks of a quarter of the calls (joins, leaves, starts and ends), stored by the real ingest.
  const deliveries = await sendCallDeliveries(file, db, "c.pk % 4 = 0", 21);
  await copyAll(db, targets, writers);

  // The platform moves on: ongoing calls end, new calls, recordings; a re-sync changes rows.
  await emu.admin.advance({ seconds: 7200, newCalls: 40, endOngoing: true, addRecordings: 25 });
  await syncAll(db, ids);
  writeTies(db, "tie-late", 30);
  const s = db.$client;
  const now = Date.now();
  const sample = (sqlPart: string, n: number) =>
    s.prepare(`SELECT a.app_id AS app, c.session_id AS sessionId, c.pk AS pk FROM calls c JOIN apps a ON a.pk = c.app_pk ${sqlPart} ORDER BY c.pk LIMIT ${n}`).all() as Array<{ app: string; sessionId: string; pk: number }>;
  const touch = s.prepare("UPDATE calls SET updated_ms = ? WHERE pk = ?");
  const changed: Warehouse["changed"] = [];
  s.transaction(() => {
    // Calls that lost a participant on a re-sync (the platform's record listed fewer).
    for (const c of sample("WHERE c.total_participants >= 2 AND c.pk % 7 = 0", 30)) {
      s.prepare("DELETE FROM call_participants WHERE call_pk = ? AND seq = (SELECT max(seq) FROM call_participants WHERE call_pk = ?)").run(c.pk, c.pk);
      touch.run(now, c.pk);
      changed.push(c);
    }
    // Odd uids, listed in several calls each (so that a uid filter finds them).
    const rows = s.prepare("SELECT call_pk, seq FROM call_participants WHERE (call_pk * 31 + seq) % 97 = 0 ORDER BY call_pk, seq LIMIT 120").all() as Array<{ call_pk: number; seq: number }>;
    rows.forEach((r, i) => {
      s.prepare("UPDATE call_participants SET uid = ? WHERE call_pk = ? AND seq = ?").run(ODD_UIDS[i % ODD_UIDS.length], r.call_pk, r.seq);
      touch.run(now, r.call_pk);
    });
    // Recordings from webhooks: for synced calls (which they flag), for calls not synced yet, one without a start time.
    const rec = s.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
    const flag = s.prepare("UPDATE calls SET has_recording = 1, updated_ms = ? WHERE app_pk = ? AND session_id = ? AND has_recording = 0");
    sample("WHERE c.platform_has_recording = 0 AND c.status = 'ended' AND c.pk % 11 = 0", 40).forEach((c, i) => {
      const appPk = s.prepare("SELECT app_pk FROM calls WHERE pk = ?").pluck().get(c.pk) as number;
      const start = s.prepare("SELECT start_at FROM calls WHERE pk = ?").pluck().get(c.pk) as number;
      rec.run(appPk, c.sessionId, `https://rec.example/${i}?a=1&b='x'`, "2025-12-01", 12.5 + i / 8, i === 3 ? null : start + 5, now + i);
      flag.run(now, appPk, c.sessionId);
      changed.push(c);
    });
    for (let i = 0; i < 5; i++) rec.run(1, `not-synced-${i}`, `https://rec.example/orphan-${i}`, null, null, NOW - 3600 * i, now + 100 + i);
    // Recordings of one start second received in the same millisecond, in two apps, stored in an order neither session id nor URL gives.
    ["tie-rec-c", "tie-rec-a", "tie-rec-d", "tie-rec-b"].forEach((id, i) => rec.run(1 + (i % 2), id, `https://rec.example/tie-${3 - i}`, null, null, TIE_START - 600, now + 500));
  })();
  // More deliveries after the first copy (the second carries them), some for calls that already had some.
  const laterDeliveries = await sendCallDeliveries(file, db, "c.pk % 8 IN (1, 4)", 22);
  const secondCopy = await copyAll(db, targets, writers); // the second copy: only new and changed rows

  // Calls that change again and again (a copy after each change: every version reaches
  // ClickHouse), some of them moving their start across a month boundary, as an initiated
  // call that starts later does.
  const several = sample("WHERE c.status = 'ended' AND c.total_participants >= 2 AND c.pk % 17 = 3", 6);
  const moved = several.slice(0, 3);
  for (const round of [1, 2, 3]) {
    // Stamped now, not at the fixture's start: the copy looks for rows changed since a minute
    // before its previous run began, and on a loaded box that run may begin minutes later.
    const at = Date.now();
    s.transaction(() => {
      for (const c of several) {
        s.prepare("UPDATE calls SET duration_seconds = duration_seconds + 60, total_duration_minutes = total_duration_minutes + 1, total_audio_minutes = total_audio_minutes + 0.5, updated_ms = ? WHERE pk = ?").run(at, c.pk);
        if (round === 3) s.prepare("UPDATE calls SET status = 'rejected' WHERE pk = ?").run(c.pk);
      }
      // January 31 23:50 UTC, then February 1 00:10, then back to January: the start crosses the month each round.
      const startOf = [0, MONTH_EDGE - 600, MONTH_EDGE + 600, MONTH_EDGE - 300][round];
      for (const c of moved) s.prepare("UPDATE calls SET started_at = ?, start_at = ?, initiated_at = ? - 20, ended_at = ? + duration_seconds, updated_ms = ? WHERE pk = ?").run(startOf, startOf, startOf, startOf, at + 1, c.pk);
    })();
    await copyAll(db, targets, writers);
  }

  // Deletes: an app removed (cascade in SQLite; ClickHouse keeps its rows, never read), calls deleted (cancel rows).
  await removeApp(db, "gamma");
  const deleted = sample("WHERE a.app_id = 'alpha' AND c.pk % 13 = 0", 4);
  for (const c of deleted) {
    const appPk = s.prepare("SELECT app_pk FROM calls WHERE pk = ?").pluck().get(c.pk) as number;
    s.prepare("DELETE FROM calls WHERE pk = ?").run(c.pk);
    // A delete in schema v2: the cancel rows of the stored state, through the target's writer (as the copy writes).
    for (const ch of targets) await (writers.get(ch) ?? new CallWriterV2(ch, [{ client: ch, weight: 1 }])).write(appPk, [{ sessionId: c.sessionId, version: Date.now() + 1, next: undefined }]);
  }
  return {
    db,
    changed: changed.map(({ app, sessionId }) => ({ app, sessionId })),
    changedSeveralTimes: several.map(({ app, sessionId }) => ({ app, sessionId })),
    deleted: deleted.map(({ app, sessionId }) => ({ app, sessionId })),
    removedApp: "gamma",
    deliveries: { first: deliveries, later: laterDeliveries },
    secondCopy,
    stop: async () => {
      await emu.stop();
      db.$client.close();
    },
  };
}

/** `n` missed calls starting at TIE_START, alternating alpha and beta, session ids descending (see TIE_START). */
function writeTies(db: Db, prefix: string, n: number): void {
  const pkOf = (appId: string) => db.$client.prepare("SELECT pk FROM apps WHERE app_id = ?").pluck().get(appId) as number;
  const apps = [pkOf("alpha"), pkOf("beta")];
  const calls: FixtureCall[] = Array.from({ length: n }, (_, i) => ({
    appPk: apps[i % 2], sessionId: `${prefix}-${String(n - i).padStart(3, "0")}`, type: "audio", mode: "call",
    status: i % 3 === 0 ? "rejected" : "unanswered", receiverType: "user", initiatedAt: TIE_START, startedAt: null, endedAt: TIE_START + 20,
    hasRecording: false, audio: 0, video: 0, total: 0, durationSeconds: 0,
    participants: ["caller", "callee"].map((uid) => ({ uid: `${uid}-${i % 4}`, state: "unanswered", isJoined: false, audio: 0, video: 0, total: 0, joinedAt: null, leftAt: null })),
  }));
  writeCalls(db, calls);
  const now = Date.now();
  db.$client.prepare(`UPDATE calls SET source = 'sync', first_seen_ms = ?, updated_ms = ? WHERE session_id LIKE '${prefix}-%'`).run(now, now);
}
