import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { openDatabase } = await import("@/db/client");
const { addApp } = await import("@/lib/apps/registry");
const { spawnEmulator } = await import("@/lib/emulator/test-emulator");
const { syncApp } = await import("@/lib/sync");
const A = await import("../direct");
const { handleReport } = await import("../test-route");
const { REPORT_ANSWERERS } = await import("../report-answerers");
const { tempDbFile } = await import("../../../test-fixtures");
const { offsetAt } = await import("@/lib/time/tz");
const { round3 } = await import("../../../report-types");

type Db = ReturnType<typeof openDatabase>;
type Emu = Awaited<ReturnType<typeof spawnEmulator>>;

/**
 * A warehouse filled by a real sync from the emulator over HTTP; every report is held to
 * an oracle computed in plain TypeScript over the emulator's truth records.
 */
interface TP { uid: string; state: string; isJoined: boolean; audio: number; video: number; total: number }
interface TC {
  app: string; sessionId: string; type: string; mode: string; status: string; receiverType: string; start: number; end: number;
  hasRecording: boolean; audio: number; video: number; durationSeconds: number; pc: number; participants: TP[];
}

const num = (v: unknown) => (v === undefined || v === null || v === "" ? 0 : Number(v));
const hms = (s: string) => s.split(":").map(Number).reduce((a, b) => a * 60 + b, 0);

function normalise(app: string, w: Record<string, unknown>): TC {
  const started = w.startedAt === undefined ? undefined : Math.trunc(num(w.startedAt));
  const start = started && started > 0 ? started : Math.trunc(num(w.initiatedAt));
  const ended = w.endedAt === undefined ? undefined : Math.trunc(num(w.endedAt));
  const parts = (w.participants as Array<Record<string, unknown>>).map((p) => ({
    uid: String(p.uid), state: String(p.state), isJoined: p.isJoined === true || p.isJoined === "true",
    audio: num(p.totalAudioMinutes), video: num(p.totalVideoMinutes), total: num(p.totalDuration),
  }));
  return {
    app, sessionId: String(w.sessionId), type: String(w.type), mode: String(w.mode), status: String(w.status), receiverType: String(w.receiverType),
    start, end: Math.max(start, ended ?? start), hasRecording: w.hasRecording === true || w.hasRecording === "true",
    audio: num(w.totalAudioMinutes), video: num(w.totalVideoMinutes), durationSeconds: hms(String(w.totalDuration)),
    pc: Math.trunc(num(w.totalParticipants)), participants: parts,
  };
}

const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z
let emu: Emu;
let db: Db;
const truth: TC[] = [];
/** The emulator's records exactly as served, by session id. */
const wire = new Map<string, Record<string, unknown>>();
const ALL = { appPks: "all" as const };

beforeAll(async () => {
  emu = await spawnEmulator({ seed: 5, now: NOW, months: 6, apps: [{ appId: "alpha", count: 2500, region: "in" }, { appId: "beta", count: 900, region: "eu" }] });
  db = openDatabase(tempDbFile("analytics-int"));
  for (const a of emu.apps) {
    const row = await addApp(db, { appId: a.appId, name: a.appId, region: a.region, apiKey: a.apiKey, callsUrl: a.callsUrl });
    const s = await syncApp(db, row, { trigger: "test" });
    expect(s.status).toBe("succeeded");
    const served = (await emu.admin.truth(a.appId)) as unknown as Array<Record<string, unknown>>;
    for (const w of served) wire.set(String(w.sessionId), w);
    truth.push(...served.map((w) => normalise(a.appId, w)));
  }
}, 120_000);

afterAll(async () => {
  await emu?.stop();
  db?.$client.close();
});

type F = ReturnType<typeof A.filters>;

function matches(c: TC, f: F): boolean {
  return (f.apps.length === 0 || f.apps.includes(c.app)) && (!f.type || c.type === f.type) && (!f.mode || c.mode === f.mode) &&
    (!f.status || c.status === f.status) && (!f.receiverType || c.receiverType === f.receiverType) &&
    (f.hasRecording === undefined || c.hasRecording === f.hasRecording) && (f.participantsCount === undefined || c.pc === f.participantsCount) &&
    (f.uid === undefined || c.participants.some((p) => p.uid === f.uid)) && (f.from === undefined || c.start >= f.from) && (f.to === undefined || c.start < f.to);
}

const close = (a: number, b: number) => Math.abs(a - b) < 0.0015;

const DAY = 86_400;
const T0 = NOW - 120 * DAY + 3_777; // not aligned: exercises raw edges
const T1 = NOW - 17 * DAY - 1_234;

function combos(): F[] {
  const nasty = "a,b";
  const list: Array<Partial<F>> = [
    {}, { apps: ["alpha"] }, { apps: ["beta", "alpha"] }, { type: "video" }, { mode: "meet" }, { status: "unanswered" }, { status: "ongoing" },
    { receiverType: "group" }, { hasRecording: true }, { hasRecording: false }, { participantsCount: 2 }, { uid: nasty },
    { uid: "=cmd|' /C calc'!A0" }, { from: T0 }, { to: T1 }, { from: T0, to: T1 }, { from: NOW - 40 * DAY, to: NOW - 40 * DAY },
    { type: "audio", status: "ended", from: T0, to: T1 }, { mode: "call", hasRecording: true, apps: ["alpha"] },
    { receiverType: "user", participantsCount: 2, type: "video" }, { uid: nasty, type: "video", from: T0 },
    { status: "rejected", mode: "call", to: T1 }, { from: Date.UTC(2025, 7, 1) / 1000, to: Date.UTC(2025, 10, 1) / 1000 },
  ];
  return list.map((p) => A.filters(p));
}

describe("reports against an oracle over the emulator's truth", () => {
  it("totals, breakdowns, durations and the calls list count", () => {
    for (const f of combos()) {
      const sel = truth.filter((c) => matches(c, f));
      const t = A.getTotals(db, f, ALL).current;
      const label = JSON.stringify(f);
      expect(t.calls, label).toBe(sel.length);
      expect(close(t.audioMinutes, sel.reduce((s, c) => s + c.audio, 0)), label).toBe(true);
      expect(close(t.videoMinutes, sel.reduce((s, c) => s + c.video, 0)), label).toBe(true);
      expect(close(t.recordingShare, sel.length ? sel.filter((c) => c.hasRecording).length / sel.length : 0), label).toBe(true);
      expect(close(t.unansweredRate, sel.length ? sel.filter((c) => c.status === "unanswered").length / sel.length : 0), label).toBe(true);
      expect(A.getCalls(db, { ...f, perPage: 5 }, ALL).meta.pagination.total, label).toBe(sel.length);
      const b = A.getBreakdowns(db, f, ALL);
      for (const row of b.filter((r) => r.dimension === "type" || r.dimension === "status")) {
        const key = row.dimension as "type" | "status";
        expect(row.calls, `${label} ${key}=${row.value}`).toBe(sel.filter((c) => c[key] === row.value).length);
      }
      const durs = A.getDurationDistribution(db, f, ALL);
      for (const d of durs) {
        expect(d.calls, `${label} ${d.bucket}`).toBe(sel.filter((c) => c.durationSeconds >= d.minSeconds && (d.maxSeconds === null || c.durationSeconds < d.maxSeconds)).length);
      }
    }
  });

  it("per participant and per app, minutes to 0.001", () => {
    for (const f of combos()) {
      const sel = truth.filter((c) => matches(c, f));
      const want = new Map<string, { calls: number; joined: number; unanswered: number; audio: number; video: number; total: number; first: number; last: number }>();
      for (const c of sel) {
        const seen = new Map<string, TP[]>();
        for (const p of c.participants) seen.set(p.uid, [...(seen.get(p.uid) ?? []), p]);
        for (const [uid, rows] of seen) {
          const k = `${c.app}\u0000${uid}`;
          const w = want.get(k) ?? { calls: 0, joined: 0, unanswered: 0, audio: 0, video: 0, total: 0, first: Infinity, last: -Infinity };
          w.calls++;
          if (rows.some((p) => p.isJoined)) w.joined++;
          if (rows.some((p) => p.state === "unanswered")) w.unanswered++;
          for (const p of rows) { w.audio += p.audio; w.video += p.video; w.total += p.total; }
          w.first = Math.min(w.first, c.start);
          w.last = Math.max(w.last, c.start);
          want.set(k, w);
        }
      }
      const got = A.getParticipantUsage(db, f, ALL);
      const label = JSON.stringify(f);
      expect(got.length, label).toBe(want.size);
      for (const g of got) {
        const w = want.get(`${g.app}\u0000${g.uid}`)!;
        expect([g.calls, g.joined, g.unanswered, g.firstCallAt, g.lastCallAt], `${label} ${g.uid}`).toEqual([w.calls, w.joined, w.unanswered, w.first, w.last]);
        expect(close(g.audioMinutes, w.audio) && close(g.videoMinutes, w.video) && close(g.totalMinutes, w.total), `${label} ${g.uid}`).toBe(true);
      }
      const apps = A.getAppUsage(db, f, ALL);
      for (const a of apps) {
        const s = sel.filter((c) => c.app === a.app);
        expect(a.calls, label).toBe(s.length);
        expect(close(a.audioMinutes, s.reduce((x, c) => x + c.audio, 0)), label).toBe(true);
        expect(a.recordings, label).toBe(s.filter((c) => c.hasRecording).length);
        expect(a.participants, label).toBe(new Set(s.flatMap((c) => c.participants.map((p) => p.uid))).size);
      }
      // Engagement is the participant report bucketed.
      const eng = A.getEngagement(db, f, ALL);
      expect(eng.reduce((s, e) => s + e.participants, 0), label).toBe(want.size);
    }
  });

  it("day buckets follow tz: Asia/Kolkata, Asia/Kathmandu, Europe/Berlin across DST", () => {
    const berlinDst = Date.UTC(2025, 9, 26) / 1000; // 2025-10-26, 25 hours long in Berlin
    for (const tz of ["UTC", "Asia/Kolkata", "Asia/Kathmandu", "Europe/Berlin"]) {
      // A scanned filter finds a start's day in a table per quarter hour (scan/quarter.ts): `from` off a quarter on purpose.
      for (const extra of [{}, { type: "video" as const }, { uid: "a,b" }, { mode: "meet" as const, status: "ended" as const }]) {
        const f = A.filters({ tz, from: berlinDst - 10 * DAY - 3_593, to: berlinDst + 5 * DAY, ...extra });
        const want = new Map<string, { calls: number; audio: number; video: number; seconds: number; parts: number }>();
        for (const c of truth.filter((x) => matches(x, f))) {
          const date = new Date((c.start + offsetAt(tz, c.start)) * 1000).toISOString().slice(0, 10);
          const intl = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(c.start * 1000));
          expect(date).toBe(intl);
          const w = want.get(date) ?? { calls: 0, audio: 0, video: 0, seconds: 0, parts: 0 };
          w.calls++; w.audio += c.audio; w.video += c.video; w.seconds += c.durationSeconds; w.parts += c.pc;
          want.set(date, w);
        }
        const got = A.getDailyUsage(db, f, ALL);
        const label = `${tz} ${JSON.stringify(extra)}`;
        expect(got.length, label).toBeGreaterThanOrEqual(15);
        for (const d of got) {
          const w = want.get(d.date) ?? { calls: 0, audio: 0, video: 0, seconds: 0, parts: 0 };
          expect(d.calls, `${label} ${d.date}`).toBe(w.calls);
          expect(close(d.audioMinutes, w.audio) && close(d.videoMinutes, w.video), `${label} ${d.date}`).toBe(true);
          expect([d.avgDurationSeconds, d.avgParticipants], `${label} ${d.date}`).toEqual(w.calls ? [round3(w.seconds / w.calls), round3(w.parts / w.calls)] : [0, 0]);
        }
        expect(got.reduce((s, d) => s + d.calls, 0), label).toBe([...want.values()].reduce((s, w) => s + w.calls, 0));
      }
    }
  });

  it("heatmap: a call counts in every local hour it overlaps, under any filter, in a given or an open window", () => {
    const fmt = new Map<string, Intl.DateTimeFormat>();
    const wd = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    /** The oracle: per local hour start of [from, to), the matching calls running in it. */
    function oracle(f: F, tz: string, from: number, to: number): number[] {
      const want = new Array(7 * 24).fill(0);
      if (!fmt.has(tz)) fmt.set(tz, new Intl.DateTimeFormat("en-US", { timeZone: tz, weekday: "short", hour: "numeric", hourCycle: "h23" }));
      // Local hour starts of the window, found minute by quarter hour with Intl.
      const hours: number[] = [];
      for (let t = Math.floor(from / 900) * 900; t < to + 3600; t += 900) if ((t + offsetAt(tz, t)) % 3600 === 0 && t >= from && t < to) hours.push(t);
      const sel = truth.filter((c) => matches(c, { ...f, from: undefined, to: undefined }));
      for (const h of hours) {
        const parts = fmt.get(tz)!.formatToParts(new Date(h * 1000));
        const cell = wd.indexOf(parts.find((p) => p.type === "weekday")!.value) * 24 + Number(parts.find((p) => p.type === "hour")!.value);
        for (const c of sel) if (c.start < h + 3600 && (c.end > h || (c.end === c.start && c.start >= h))) want[cell]++;
      }
      return want;
    }
    const from = Date.UTC(2025, 9, 20) / 1000;
    const to = Date.UTC(2025, 10, 3) / 1000;
    // Apps only: the blocks' counts; any other filter: one pass counting per quarter hour (scan/heat.ts heatQuartersOf).
    const sets = [{}, { uid: "a,b" }, { type: "audio" as const, status: "ended" as const }, { mode: "meet" as const, participantsCount: 3 }, { receiverType: "group" as const, apps: ["beta"] }];
    for (const tz of ["Asia/Kathmandu", "Europe/Berlin"]) {
      for (const extra of sets) {
        const f = A.filters({ tz, from, to, ...extra });
        const want = oracle(f, tz, from, to);
        expect(want.some((n) => n > 0), `${tz} ${JSON.stringify(extra)}`).toBe(true);
        expect(A.getConcurrencyHeatmap(db, f, ALL).map((c) => c.calls), `${tz} ${JSON.stringify(extra)}`).toEqual(want);
        // An open window: the matching calls' first start quarter to the last quarter they run in.
        const open = A.filters({ tz, ...extra });
        const sel = truth.filter((c) => matches(c, open));
        const first = Math.min(...sel.map((c) => Math.floor(c.start / 900)));
        const last = Math.max(...sel.map((c) => Math.max(Math.floor(c.start / 900), Math.floor((c.end - 1) / 900))));
        const got = A.getConcurrencyHeatmap(db, open, ALL);
        expect(got.map((c) => c.calls), `open ${tz} ${JSON.stringify(extra)}`).toEqual(oracle(open, tz, first * 900, last * 900 + 900));
        expect(got.reduce((n, c) => n + c.hours, 0), `open ${tz} ${JSON.stringify(extra)}`).toBeGreaterThan(24 * 100);
      }
    }
  });

  it("CSV round-trips to the JSON rows, hostile uids included", async () => {
    const caller = { userId: 1, email: "t@example.com", role: "admin" as const, appPks: "all" as const };
    const deps = { db: () => db, authorize: async () => caller };
    const q = "?from=" + (NOW - 60 * DAY);
    const csvRes = await handleReport(new Request(`http://x/api/v1/usage/participants${q}&format=csv`), REPORT_ANSWERERS.participants, deps);
    expect(csvRes.headers.get("content-disposition")).toMatch(/^attachment; filename="callboard-participants_\d{4}-\d{2}-\d{2}_to_\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parse(await csvRes.text(), { columns: true }) as Array<Record<string, string>>;
    const json = A.getParticipantUsage(db, A.filters({ from: NOW - 60 * DAY }), ALL);
    expect(rows.length).toBe(json.length);
    const uids = rows.map((r) => r.uid);
    for (const nasty of ["a,b", 'say "hi"', "line\nbreak", "zoë", "用户42", "🦄unicorn"]) expect(uids).toContain(nasty);
    expect(uids).toContain("'=cmd|' /C calc'!A0");
    expect(uids).toContain("'+15550100");
    json.forEach((j, i) => {
      const r = rows[i];
      expect(r.uid.replace(/^'(?=[=+\-@\t\r])/, "")).toBe(j.uid);
      expect(r.audioMinutes).toBe(j.audioMinutes.toFixed(3));
      expect(Number(r.calls)).toBe(j.calls);
      expect(r.firstCallAt).toBe(String(j.firstCallAt));
    });
    const callsCsv = await handleReport(new Request(`http://x/api/v1/calls${q}&uid=${encodeURIComponent("a,b")}&format=csv`), REPORT_ANSWERERS.calls, deps);
    const callRows = parse(await callsCsv.text(), { columns: true }) as Array<Record<string, string>>;
    const all = A.getCalls(db, A.filters({ from: NOW - 60 * DAY, uid: "a,b", perPage: 1000 }), ALL).data;
    expect(callRows.map((r) => r.sessionId)).toEqual(all.map((c) => c.sessionId));
    expect(callRows.map((r) => r.totalAudioMinutes)).toEqual(all.map((c) => c.totalAudioMinutes.toFixed(3)));
  });

  it("scope: other apps are invisible and answer 404", async () => {
    const alpha = db.$client.prepare("SELECT pk FROM apps WHERE app_id = 'alpha'").pluck().get() as number;
    const viewer = { appPks: [alpha] };
    expect(A.getAppUsage(db, A.filters(), viewer).map((a) => a.app)).toEqual(["alpha"]);
    expect(A.getTotals(db, A.filters(), viewer).current.calls).toBe(truth.filter((c) => c.app === "alpha").length);
    expect(() => A.getTotals(db, A.filters({ apps: ["beta"] }), viewer)).toThrow(/not found/);
    expect(() => A.getCalls(db, A.filters({ apps: ["nope"] }), ALL)).toThrow(/not found/);
    const one = truth.find((c) => c.app === "beta")!;
    expect(() => A.getCall(db, { app: "beta", sessionId: one.sessionId }, viewer)).toThrow(/not found/);
    const detail = A.getCall(db, { app: "beta", sessionId: one.sessionId }, ALL);
    expect(detail.participants.length).toBe(one.participants.length);
    // The raw record for support is the platform's, as it was received.
    expect(detail.raw).toEqual(wire.get(one.sessionId));
    // An upstream record nested 50,000 levels deep (stored as received) must not bring the
    // call detail down: JSON.stringify of it overflowed the stack (API answer, page, RSC).
    const deep = `{"sessionId":"${one.sessionId}","extra":${"[".repeat(50_000)}${"]".repeat(50_000)}}`;
    const before = db.$client.prepare("SELECT raw FROM calls WHERE session_id = ?").pluck().get(one.sessionId) as string;
    db.$client.prepare("UPDATE calls SET raw = ? WHERE session_id = ?").run(deep, one.sessionId);
    const deepDetail = A.getCall(db, { app: "beta", sessionId: one.sessionId }, ALL);
    expect(JSON.parse(JSON.stringify(deepDetail)).raw.note).toMatch(/deeper than 64 levels/);
    db.$client.prepare("UPDATE calls SET raw = ? WHERE session_id = ?").run(before, one.sessionId);
    const deps = { db: () => db, authorize: async () => ({ userId: 2, email: "v@example.com", role: "viewer" as const, appPks: [alpha] }) };
    const res = await handleReport(new Request("http://x/api/v1/calls?app=beta"), REPORT_ANSWERERS.calls, deps);
    expect(res.status).toBe(404);
  });
});
