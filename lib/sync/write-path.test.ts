/**
 * The write worker's lean path (participant rows several to an INSERT, raw records bound
 * as the page's bytes) stores exactly what the plain path stores: one INSERT per
 * participant row and raw records decoded to text first. Both write the same varied
 * records into their own fresh warehouse: new calls from every data mix (strings for
 * numbers, unknown keys, 20–45 participants), non-ASCII text, invalid UTF-8, webhook-made
 * rows, and a re-sync in which calls changed, lost or gained participants, or came twice.
 * Every row of calls, call_participants and the change log must match, types included.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import { DATA_MIXES, type DataMixName } from "@/lib/emulator/mixes";
import { serializeServed } from "@/lib/emulator/quirks";
import { parseCallRecord } from "@/lib/platform/call-record";
import { contentHash, extraParticipantJson, resolveRawBytes, resolveRawTexts, toWriteRow, PART_WIDTH, W, type WriteRow } from "./pending-rows";
import { CallWriter } from "./writer";

process.env.AUTH_SECRET ??= "test-secret-test-secret-test-secret-00";

const dir = mkdtempSync(path.join(tmpdir(), "callboard-write-path-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let opened: Db[] = [];
afterEach(() => {
  for (const db of opened) db.$client.close();
  opened = [];
  vi.useRealTimers();
});
beforeEach(() => {
  // Both warehouses get the same first_seen_ms / updated_ms stamps.
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(1_780_000_000_000);
});

/**
 * The participant-insert trigger as migration 0009 made it (0020 dropped it): the change
 * log the reference writer keeps is the one main's schema kept.
 */
function participantInsertTriggerOf0009(): string {
  const sql = readFileSync(path.join(process.cwd(), "db/migrations/0009_new_calls_by_pk.sql"), "utf8");
  const create = sql.split("--> statement-breakpoint").map((x) => x.trim()).find((x) => x.startsWith("CREATE TRIGGER analytics_log_participants_ai"));
  if (!create) throw new Error("0009 no longer creates analytics_log_participants_ai");
  return create;
}

async function warehouse(name: string): Promise<{ db: Db; appPk: number }> {
  const db = openDatabase(path.join(dir, `${name}-${Math.random().toString(36).slice(2)}.db`));
  opened.push(db);
  const app = await addApp(db, { appId: "app1", name: "app", region: "us", apiKey: "k".repeat(32), callsUrl: "http://127.0.0.1:9" });
  return { db, appPk: app.pk };
}

/** Records as the platform's text, from a data mix of the emulator. */
function mixRecords(mix: DataMixName, count: number, from = 0): string[] {
  const ctx = makeContext({ appId: `w-${mix}`, seed: 7, count: from + count, now: 1_780_000_000, months: 10, mix });
  return Array.from({ length: count }, (_, i) => serializeServed(generateCallAt(ctx, from + i), undefined, DATA_MIXES[mix]));
}

/** A page: the records' UTF-8 bytes back to back; `invalid` puts a 0xFF byte into that record's uid. */
function page(texts: string[], invalid?: number): { bytes: Buffer; ranges: number[] } {
  const parts: Buffer[] = [];
  const ranges: number[] = [];
  let at = 0;
  texts.forEach((t, i) => {
    let b = Buffer.from(t, "utf8");
    if (i === invalid) {
      const u = b.indexOf('"uid":"') + 8;
      b = Buffer.concat([b.subarray(0, u), Buffer.from([0xff]), b.subarray(u)]);
    }
    parts.push(b);
    ranges.push(at, at + b.length);
    at += b.length;
  });
  return { bytes: Buffer.concat(parts), ranges };
}

/** The page's records as the sync thread stages them: raw records as offsets into the page. */
function rowsOf(p: { bytes: Buffer; ranges: number[] }): WriteRow[] {
  const rows: WriteRow[] = [];
  for (let i = 0; i < p.ranges.length / 2; i++) {
    const [start, end] = [p.ranges[2 * i], p.ranges[2 * i + 1]];
    const rec = JSON.parse(p.bytes.toString("utf8", start, end)) as Record<string, unknown>;
    const r = parseCallRecord(rec);
    if (!r.ok) throw new Error(`test record refused: ${r.reason}`);
    const parts = Array.isArray(rec.participants) ? (rec.participants as unknown[]) : [];
    rows.push(toWriteRow({ call: r.call, rawJson: null, rawStart: start, rawEnd: end, hash: contentHash(p.bytes.subarray(start, end)), participantExtras: parts.map(extraParticipantJson) }));
  }
  return rows;
}

function dump(db: Db) {
  const all = (sql: string) => db.$client.prepare(sql).all();
  return {
    calls: all("SELECT *, typeof(raw) raw_type, typeof(content_hash) hash_type FROM calls ORDER BY pk"),
    participants: all("SELECT *, typeof(raw) raw_type, typeof(uid) uid_type FROM call_participants ORDER BY call_pk, seq"),
    changes: all("SELECT * FROM analytics_changes ORDER BY seq"),
  };
}

/**
 * What the sync stores, written the plainest way and independently of CallWriter: each
 * call inserted unless its key is stored, else upserted (each of the two uses up a pk
 * under AUTOINCREMENT, conflict or not); every value a bound parameter, one INSERT per participant row,
 * raw records as text, and the change log as the schema's triggers kept it before
 * migration 0020 (the test gives the reference its participant-insert trigger back), plus
 * the sync's own entry for a call it updates. CallWriter's statements (multi-row INSERTs,
 * bytes for text, no trigger on inserts) must store exactly this.
 */
function referenceWrite(db: Db, appPk: number, rows: WriteRow[], now: number): void {
  const s = db.$client;
  const recorded = s.prepare("SELECT EXISTS (SELECT 1 FROM recordings WHERE app_pk = ? AND session_id = ?)").pluck();
  const cols = `mid, type, mode, status, initiator, receiver, receiver_type, initiated_at, started_at, ended_at, start_at,
    platform_has_recording, has_recording, total_audio_minutes, total_video_minutes, total_duration_minutes, duration_seconds,
    total_participants, content_hash, raw`.split(",").map((c) => c.trim());
  const insert = s.prepare(`INSERT INTO calls (app_pk, session_id, ${cols.join(", ")}, source, first_seen_ms, updated_ms)
    VALUES (${Array.from({ length: cols.length + 2 }, () => "?").join(", ")}, 'sync', ?, ?) ON CONFLICT (app_pk, session_id) DO NOTHING`);
  const upsert = s.prepare(`INSERT INTO calls (app_pk, session_id, ${cols.join(", ")}, source, first_seen_ms, updated_ms)
    VALUES (${Array.from({ length: cols.length + 2 }, () => "?").join(", ")}, 'sync', ?, ?) ON CONFLICT (app_pk, session_id) DO UPDATE SET
    ${cols.map((c) => `${c} = excluded.${c}`).join(", ")}, source = 'sync', updated_ms = excluded.updated_ms RETURNING pk`).pluck();
  const dropParticipants = s.prepare("DELETE FROM call_participants WHERE call_pk = ?");
  const logUpdate = s.prepare("INSERT INTO analytics_changes (call_pk) SELECT ? WHERE (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT ?");
  const participant = s.prepare(`INSERT INTO call_participants (call_pk, app_pk, seq, uid, state, is_joined, total_audio_minutes,
    total_video_minutes, total_duration_minutes, device_id, joined_at, left_at, mid, raw) VALUES (${Array.from({ length: 14 }, () => "?").join(", ")})`);
  s.transaction(() => {
    for (const r of rows) {
      const platformFlag = r[W.hasRecording] as number;
      const hasRecording = platformFlag === 1 || recorded.get(appPk, r[W.sessionId]) === 1 ? 1 : 0;
      const values = [r[W.mid], r[W.type], r[W.mode], r[W.status], r[W.initiator], r[W.receiver], r[W.receiverType], r[W.initiatedAt],
        r[W.startedAt], r[W.endedAt], r[W.startAt], platformFlag, hasRecording, r[W.audio], r[W.video], r[W.durationMinutes],
        r[W.durationSeconds], r[W.totalParticipants], r[W.hash], r[W.raw]];
      const inserted = insert.run(appPk, r[W.sessionId], ...values, now, now);
      let pk = Number(inserted.lastInsertRowid);
      if (inserted.changes === 0) {
        pk = upsert.get(appPk, r[W.sessionId], ...values, now, now) as number;
        dropParticipants.run(pk);
        logUpdate.run(pk, pk);
      }
      for (let j = 0, o = W.parts; j < (r[W.participantCount] as number); j++, o += PART_WIDTH) {
        participant.run(pk, appPk, ...r.slice(o, o + PART_WIDTH));
      }
    }
  }).immediate();
}

/** A webhook-made row with two participants, as the ingest leaves one before the sync. */
function webhookRow(db: Db, appPk: number, sessionId: string): void {
  const s = db.$client;
  const pk = s
    .prepare("INSERT INTO calls (app_pk, session_id, start_at, source, status, first_seen_ms, updated_ms) VALUES (?, ?, 1, 'webhook', 'ongoing', 0, 0) RETURNING pk")
    .pluck()
    .get(appPk, sessionId) as number;
  for (const seq of [0, 1]) s.prepare("INSERT INTO call_participants (call_pk, app_pk, seq, uid) VALUES (?, ?, ?, ?)").run(pk, appPk, seq, `hook-${seq}`);
}

/** A record changed for the re-sync: another status, its participants cut to `keep` (or all kept). */
function changed(text: string, keep?: number): string {
  const rec = JSON.parse(text) as Record<string, unknown>;
  rec.status = "ended";
  rec.totalAudioMinutes = 99;
  if (keep !== undefined && Array.isArray(rec.participants)) rec.participants = rec.participants.slice(0, keep);
  return JSON.stringify(rec);
}

describe("the write worker's lean path", () => {
  it("stores exactly what one INSERT per participant row and decoded raw texts store", async () => {
    const heavy = mixRecords("heavy-users", 40);
    const big = mixRecords("big-meetings", 8); // 20–45 participants: more than one INSERT each
    const platform = mixRecords("platform", 20);
    const unicode = JSON.stringify({ ...JSON.parse(platform[0]), sessionId: "ü-1", initiator: "jürgen.ß", participants: [{ uid: "jürgen.ß", state: "ended", isJoined: true, note: "naïve — ✓ 😀" }] });
    const none = JSON.stringify({ ...JSON.parse(platform[1]), sessionId: "no-participants", participants: [] });
    const first = [...heavy, ...big, ...platform.slice(2), unicode, none];
    const resync = [
      changed(heavy[0], 1), // lost participants
      changed(big[0], 3),
      changed(big[1]), // changed, same participants
      changed(heavy[1], 0), // lost all
      changed(heavy[1], 2), // the same call again in the batch: written twice, the later wins
      JSON.stringify({ ...JSON.parse(none), participants: JSON.parse(heavy[2]).participants }), // gained some
      ...mixRecords("heavy-users", 10, 40), // new
      JSON.stringify({ ...JSON.parse(platform[2]), sessionId: "from-webhook" }), // over a webhook-made row
    ];
    const invalidAt = resync.length - 2; // a record with invalid UTF-8: its page is decoded with U+FFFD

    const plain = await warehouse("plain");
    const lean = await warehouse("lean");
    const reference = await warehouse("reference");
    reference.db.$client.exec(participantInsertTriggerOf0009());
    for (const w of [plain, lean, reference]) webhookRow(w.db, w.appPk, "from-webhook");
    const plainWriter = new CallWriter(plain.db, plain.appPk, { maxParticipantRowsPerStatement: 1 });
    const leanWriter = new CallWriter(lean.db, lean.appPk);
    for (const [texts, invalid] of [[first, undefined], [resync, invalidAt]] as const) {
      const p = page(texts, invalid);
      const a = rowsOf(p);
      resolveRawTexts(a, p.bytes);
      const b = rowsOf(p);
      resolveRawBytes(b, p.bytes);
      expect(b.some((r) => Buffer.isBuffer(r[W.raw]))).toBe(invalid === undefined); // bytes bound only for valid UTF-8 pages
      expect(plainWriter.writeTolerant(a)).toMatchObject({ refused: [] });
      expect(leanWriter.writeTolerant(b)).toMatchObject({ refused: [] });
      const c = rowsOf(p);
      resolveRawTexts(c, p.bytes);
      referenceWrite(reference.db, reference.appPk, c, Date.now());
      vi.advanceTimersByTime(1_000);
    }

    const want = dump(plain.db);
    const got = dump(lean.db);
    // The data are what the cases say they are (so the comparison covers them).
    expect(want.calls).toHaveLength(first.length + 10 + 1);
    expect(Math.max(...big.map((t) => (JSON.parse(t) as { participants: unknown[] }).participants.length))).toBeGreaterThan(32);
    expect(want.calls.every((c) => (c as { raw_type: string }).raw_type === "text")).toBe(true);
    expect(want.participants.some((x) => (x as { uid: string }).uid === "jürgen.ß")).toBe(true);
    expect(want.participants.some((x) => (x as { uid: string }).uid.includes("\uFFFD"))).toBe(true);
    expect(want.participants.some((x) => (x as { uid: string }).uid.startsWith("hook-"))).toBe(false);
    expect(want.changes.length).toBeGreaterThan(3);
    expect(got).toEqual(want);
    expect(got).toEqual(dump(reference.db));
  });

  it("stores each record's text as the platform sent it when bound as bytes", async () => {
    const texts = [...mixRecords("light-users", 5), JSON.stringify({ ...JSON.parse(mixRecords("platform", 1)[0]), sessionId: "é", receiver: "grüße 😀" })];
    const p = page(texts);
    const w = await warehouse("bytes");
    const rows = rowsOf(p);
    resolveRawBytes(rows, p.bytes);
    new CallWriter(w.db, w.appPk).write(rows);
    const stored = w.db.$client.prepare("SELECT raw, typeof(raw) t, content_hash h FROM calls ORDER BY pk").all() as Array<{ raw: string; t: string; h: string }>;
    expect(stored.map((s) => s.raw)).toEqual(texts);
    expect(stored.every((s) => s.t === "text")).toBe(true);
    expect(stored.map((s) => s.h)).toEqual(texts.map((t) => contentHash(t)));
  });
});
