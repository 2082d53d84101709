import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { parseCallRecord } from "@/lib/platform/call-record";
import { contentHash, toWriteRow } from "@/lib/sync/pending-rows";
import { CallWriter, LOG_CALL_CHANGE } from "@/lib/sync/writer";
import { changelogTriggerStatements } from "./changelog-sql";
import * as A from "../direct";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "../../../test-fixtures";

/**
 * The in-memory store must stay exactly what a fresh load of the warehouse gives, while
 * another connection (another process: the CLI sync) writes: sync upserts, recording
 * webhooks, participant edits, deletes and app removal.
 */

type Db = ReturnType<typeof openDatabase>;
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 0, 1) / 1000;

function reports(db: Db) {
  const sets = [
    A.filters(),
    A.filters({ from: base + 3 * 86_400 + 1234, to: base + 60 * 86_400 - 77, type: "video" }),
    A.filters({ status: "ended", hasRecording: true, tz: "Asia/Kolkata" }),
    A.filters({ uid: "a,b", tz: "Europe/Berlin" }),
    A.filters({ participantsCount: 2, apps: ["app-one"] }),
  ];
  return sets.map((f) => ({
    count: A.countCalls(db, f, "all"),
    totals: A.getTotals(db, f, ALL),
    breakdowns: A.getBreakdowns(db, f, ALL),
    durations: A.getDurationDistribution(db, f, ALL),
    daily: A.getDailyUsage(db, f, ALL),
    heatmap: A.getConcurrencyHeatmap(db, { ...f, from: f.from ?? base, to: f.to ?? base + 30 * 86_400 }, ALL),
    participants: A.getParticipantUsage(db, f, ALL),
    apps: A.getAppUsage(db, f, ALL),
    engagement: A.getEngagement(db, f, ALL),
  }));
}

describe("analytics store", () => {
  const reader = openFixtureDb("store");
  const file = reader.$client.name;
  const writer = openDatabase(file); // a second connection: what another process sees
  afterAll(() => {
    reader.$client.close();
    writer.$client.close();
  });

  /** The reader's (incrementally kept) answers equal a fresh connection's full load. */
  function expectFresh(label: string) {
    const got = reports(reader);
    const fresh = openDatabase(file);
    try {
      expect(got, label).toEqual(reports(fresh));
    } finally {
      fresh.$client.close();
    }
  }

  const r = rng(11);
  const calls: FixtureCall[] = Array.from({ length: 1500 }, (_, i) => randomCall(r, i, base, 90 * 86_400));

  it("follows inserts and re-syncs made by another connection", () => {
    writeCalls(writer, calls.slice(0, 1000));
    expectFresh("initial");
    writeCalls(writer, calls.slice(1000));
    const changed = calls.filter(() => r() < 0.3).map((c, i) => {
      const n = randomCall(r, 100_000 + i, base, 90 * 86_400);
      return { ...n, appPk: c.appPk, sessionId: c.sessionId, initiatedAt: r() < 0.5 ? c.initiatedAt : n.initiatedAt };
    });
    writeCalls(writer, changed);
    expectFresh("after re-sync");
    expect(A.analyticsStore(reader).fullLoads).toBe(1);
  });

  it("follows recording webhooks, participant edits and deletes", () => {
    const setRec = writer.$client.prepare("UPDATE calls SET has_recording = 1 WHERE app_pk = ? AND session_id = ? AND has_recording = 0");
    for (const c of calls.filter(() => r() < 0.2)) setRec.run(c.appPk, c.sessionId);
    expectFresh("recordings");
    writer.$client.exec("UPDATE call_participants SET uid = 'renamed', total_audio_minutes = total_audio_minutes + 1 WHERE (call_pk * 31 + seq) % 97 = 0");
    writer.$client.exec("DELETE FROM call_participants WHERE (call_pk * 31 + seq) % 89 = 0");
    writer.$client.exec("DELETE FROM calls WHERE pk % 13 = 0");
    expectFresh("edits and deletes");
    expect(A.analyticsStore(reader).fullLoads).toBe(1);
  });

  it("sees a participant written right after its call's own log entry", () => {
    const pk = writer.$client.prepare("SELECT max(pk) FROM calls").pluck().get() as number;
    writer.$client.prepare("UPDATE calls SET duration_seconds = duration_seconds + 1 WHERE pk = ?").run(pk);
    expectFresh("call touched"); // the reader has applied the entry naming `pk`
    const seq = () => writer.$client.prepare("SELECT max(seq) FROM analytics_changes").pluck().get() as number;
    const seqBefore = seq();
    writer.$client
      .prepare("INSERT INTO call_participants (call_pk, app_pk, seq, uid, state, is_joined, total_audio_minutes) SELECT pk, app_pk, 99, 'late', 'ended', 1, 2.5 FROM calls WHERE pk = ?")
      .run(pk);
    expect(seq()).toBe(seqBefore); // nothing appended: the newest entry already names the call
    expectFresh("late participant");
    const late = A.getParticipantUsage(reader, A.filters({ uid: "late" }), ALL).filter((p) => p.uid === "late");
    expect(late.map((p) => [p.calls, p.audioMinutes])).toEqual([[1, 2.5]]);
  });

  it("follows app removal (cascade)", () => {
    writer.$client.exec("DELETE FROM apps WHERE app_id = 'app-three'");
    expectFresh("app removed");
    expect(A.getAppUsage(reader, A.filters(), ALL).map((a) => a.app)).toEqual(["app-one", "app-two"]);
    expect(A.getTotals(reader, A.filters(), ALL).current.calls).toBe(writer.$client.prepare("SELECT count(*) FROM calls").pluck().get());
  });

  it("holds minutes that are not exact thousandths, exactly", () => {
    writer.$client.exec("UPDATE calls SET total_audio_minutes = total_audio_minutes + 1e-7 WHERE pk % 5 = 0");
    expectFresh("odd minutes");
    const sum = writer.$client.prepare("SELECT sum(total_audio_minutes) FROM calls").pluck().get() as number;
    expect(A.getTotals(reader, A.filters(), ALL).current.audioMinutes).toBeCloseTo(sum, 3);
  });

  it("logs nothing for new calls and one entry per re-synced call, not one per participant", () => {
    const seq = () => writer.$client.prepare("SELECT coalesce(max(seq), 0) FROM analytics_changes").pluck().get() as number;
    const before = seq();
    const fresh = Array.from({ length: 50 }, (_, i) => ({ ...randomCall(r, 500_000 + i, base, 90 * 86_400), appPk: 1 + (i % 2) }));
    writeCalls(writer, fresh);
    expect(seq() - before).toBe(0); // found by pk instead
    expectFresh("new calls, unlogged");
    const resynced = fresh.map((c, i) => ({ ...randomCall(r, 600_000 + i, base, 90 * 86_400), appPk: c.appPk, sessionId: c.sessionId }));
    writeCalls(writer, resynced);
    expect(seq() - before).toBe(50);
    expectFresh("re-synced calls, logged once each");
  });

  it("sees participants the sync adds to a call it inserted last, in a later transaction", () => {
    const wire = (participants: unknown[]) => ({
      sessionId: "v1.us.app-one.late-participant", mid: "m1", type: "audio", mode: "call", status: "ended", initiator: "a", receiver: "b",
      receiverType: "user", initiatedAt: base + 86_400, startedAt: base + 86_401, endedAt: base + 86_461, hasRecording: false,
      totalAudioMinutes: 1, totalVideoMinutes: 0, totalDurationInMinutes: 1, totalDuration: "00:01:00", totalParticipants: 0, participants,
    });
    const write = (record: ReturnType<typeof wire>) => {
      const parsed = parseCallRecord(record);
      if (!parsed.ok) throw new Error(parsed.reason);
      const rawJson = JSON.stringify(record);
      const row = toWriteRow({ call: parsed.call, rawJson, hash: contentHash(rawJson), participantExtras: parsed.call.participants.map(() => null) });
      new CallWriter(writer, 1).write([row]);
    };
    write(wire([]));
    expectFresh("call without participants");
    // Same call columns, one participant more: only the participant rows change, and the
    // call is this connection's last insert (the trigger's shortcut for new calls).
    write(wire([{ uid: "late-joiner", state: "ended", isJoined: true, totalAudioMinutes: 1, totalVideoMinutes: 0, totalDuration: 1, joinedAt: base + 86_401, leftAt: base + 86_461 }]));
    expectFresh("participant added later");
    const late = A.getParticipantUsage(reader, A.filters({ uid: "late-joiner" }), ALL).filter((p) => p.uid === "late-joiner");
    expect(late.map((p) => [p.calls, p.audioMinutes])).toEqual([[1, 1]]);
  });

  it("sees a participant inserted into an older call by a writer that logs it, as every writer must", () => {
    const pk = writer.$client.prepare("SELECT min(pk) FROM calls").pluck().get() as number;
    const newest = () => writer.$client.prepare("SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1").pluck().get();
    expect(newest()).not.toBe(pk);
    writer.$client.transaction(() => {
      writer.$client
        .prepare("INSERT INTO call_participants (call_pk, app_pk, seq, uid, state, is_joined, total_audio_minutes) SELECT pk, app_pk, 98, 'older-late', 'ended', 1, 1.5 FROM calls WHERE pk = ?")
        .run(pk);
      writer.$client.prepare(LOG_CALL_CHANGE).run(pk, pk);
    })();
    expect(newest()).toBe(pk);
    expectFresh("participant of an older call, logged by its writer");
    const late = A.getParticipantUsage(reader, A.filters({ uid: "older-late" }), ALL).filter((p) => p.uid === "older-late");
    expect(late.map((p) => [p.calls, p.audioMinutes])).toEqual([[1, 1.5]]);
  });

  it("has participants inserted only by writers that log the calls they did not just insert (no trigger does: migration 0020)", () => {
    const inserts = /INTO\s+[`"]?call_participants\b|insert\(callParticipants\)/i;
    const sources = ["lib", "app", "db", "scripts", "components"]
      .filter((d) => existsSync(d))
      .flatMap((d) => readdirSync(d, { recursive: true, encoding: "utf8" }).map((f) => path.join(d, f)))
      .filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f));
    const writers = sources.filter((f) => inserts.test(readFileSync(f, "utf8"))).sort();
    // A new writer of participants: make it log with LOG_CALL_CHANGE, then list it here.
    expect(writers).toEqual(["lib/analytics/test-fixtures.ts", "lib/sync/writer.ts"]);
    for (const f of writers) expect(readFileSync(f, "utf8")).toContain("LOG_CALL_CHANGE");
    const triggers = writer.$client.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'call_participants'").pluck().all();
    expect(triggers.sort()).toEqual(["analytics_log_participants_ad", "analytics_log_participants_au"]);
  });

  it("runs the change-log triggers changelog-sql.ts describes", () => {
    const stored = writer.$client.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'analytics_log_%' ORDER BY name").pluck().all();
    const declared = changelogTriggerStatements().sort((a, b) => a.split(" ")[2]!.localeCompare(b.split(" ")[2]!));
    expect(stored).toEqual(declared);
  });
});
