// Integration-test harness of the sync: the emulator as a separate process over real
// HTTP, fresh warehouse files, and the emulator's own truth to compare a warehouse with.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp, getAppByIdSync } from "@/lib/apps/registry";
import { spawnEmulator, type SpawnOptions } from "@/lib/emulator/test-emulator";

// What every sync integration test uses, from one module (imported once the test has set
// its environment).
export { openDatabase, type Db } from "@/db/client";
export { getAppById } from "@/lib/apps/registry";
export { syncApp, syncAll } from "./sync-app";

export type Emu = Awaited<ReturnType<typeof spawnEmulator>>;

export interface Truth {
  calls: number;
  participants: number;
  audio: number;
  video: number;
  ongoing: number;
  repeatedUidCalls: string[];
  /** Participant rows per sessionId. */
  participantsOf: Map<string, number>;
}

export interface WarehouseFigures {
  calls: number;
  /** Distinct sessionIds: equal to `calls` unless a call was stored twice. */
  distinct: number;
  participants: number;
  audio: number;
  video: number;
  ongoing: number;
}

/** Client settings that keep retries short in tests. */
export const fastClient = { timeoutMs: 400, maxAttempts: 10, baseBackoffMs: 20, maxBackoffMs: 200, maxRetryAfterMs: 1_000 };

const n = (v: unknown) => Number(v ?? 0);

export interface SyncHarness {
  emu: Emu;
  freshDb(): { db: Db; file: string; dir: string };
  register(db: Db, appId: string, apiKey?: string): ReturnType<typeof addApp>;
  truth(appId: string): Promise<Truth>;
  warehouse(db: Db, appId: string): WarehouseFigures;
  /** The warehouse holds exactly the emulator's calls, participants and minutes. */
  expectSame(db: Db, appId: string, t: Truth): void;
  close(): Promise<void>;
}

export async function startSyncHarness(options: SpawnOptions): Promise<SyncHarness> {
  const emu = await spawnEmulator(options);
  const opened: Array<{ db: Db; dir: string }> = [];

  const truth = async (appId: string): Promise<Truth> => {
    const t: Truth = { calls: 0, participants: 0, audio: 0, video: 0, ongoing: 0, repeatedUidCalls: [], participantsOf: new Map() };
    for (const c of await emu.admin.truth(appId)) {
      const parts = (c.participants as Array<{ uid: string }> | undefined) ?? [];
      t.calls++;
      t.participants += parts.length;
      t.participantsOf.set(String(c.sessionId), parts.length);
      t.audio += n(c.totalAudioMinutes);
      t.video += n(c.totalVideoMinutes);
      if (c.status === "ongoing") t.ongoing++;
      if (new Set(parts.map((p) => p.uid)).size < parts.length) t.repeatedUidCalls.push(String(c.sessionId));
    }
    return t;
  };

  const warehouse = (db: Db, appId: string): WarehouseFigures => {
    const s = db.$client;
    const pk = getAppByIdSync(db, appId)!.pk;
    const row = s
      .prepare(
        "SELECT count(*) calls, count(DISTINCT session_id) distinct_ids, total(total_audio_minutes) audio, total(total_video_minutes) video, sum(status = 'ongoing') ongoing FROM calls WHERE app_pk = ?",
      )
      .get(pk) as { calls: number; distinct_ids: number; audio: number; video: number; ongoing: number | null };
    const participants = s.prepare("SELECT count(*) FROM call_participants WHERE app_pk = ?").pluck().get(pk) as number;
    return { calls: row.calls, distinct: row.distinct_ids, audio: row.audio, video: row.video, ongoing: row.ongoing ?? 0, participants };
  };

  return {
    emu,
    truth,
    warehouse,
    freshDb() {
      const dir = mkdtempSync(path.join(tmpdir(), "callboard-sync-"));
      const file = path.join(dir, "warehouse.db");
      const db = openDatabase(file);
      opened.push({ db, dir });
      return { db, file, dir };
    },
    async register(db, appId, apiKey) {
      const info = emu.apps.find((a) => a.appId === appId)!;
      return await addApp(db, { appId, name: appId, region: info.region, apiKey: apiKey ?? info.apiKey, callsUrl: info.callsUrl });
    },
    expectSame(db, appId, t) {
      const w = warehouse(db, appId);
      expect(w.calls).toBe(t.calls);
      expect(w.distinct).toBe(t.calls);
      expect(w.participants).toBe(t.participants);
      expect(w.audio).toBeCloseTo(t.audio, 3);
      expect(w.video).toBeCloseTo(t.video, 3);
    },
    async close() {
      await emu.stop();
      for (const { db, dir } of opened) {
        if (db.$client.open) db.$client.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Nothing stored is damaged: SQLite's own checks, and every stored call has all its participants. */
export function expectIntact(db: Db, appId: string, t: Truth): void {
  const s = db.$client;
  expect(s.pragma("integrity_check", { simple: true })).toBe("ok");
  expect(s.pragma("foreign_key_check")).toEqual([]);
  const pk = getAppByIdSync(db, appId)!.pk;
  const stored = s
    .prepare("SELECT c.session_id id, (SELECT count(*) FROM call_participants p WHERE p.call_pk = c.pk) parts FROM calls c WHERE c.app_pk = ?")
    .all(pk) as Array<{ id: string; parts: number }>;
  const wrong = stored.filter((c) => t.participantsOf.get(c.id) !== c.parts).map((c) => c.id);
  expect(wrong).toEqual([]);
}
