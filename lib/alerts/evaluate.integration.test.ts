import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Rules evaluated over a warehouse filled by a real sync from the emulator (over HTTP),
 * through the analytics engine interface; every value is held to an oracle computed from
 * the emulator's own records. Notifications go to a real local receiver and are
 * verified with the `standardwebhooks` package.
 */
const dir = mkdtempSync(path.join(tmpdir(), "callboard-alerts-"));
process.env.AUTH_SECRET = "integration-test-secret-for-alerts-0123456789";
process.env.LOG_LEVEL = "silent";
process.env.DATABASE_PATH = path.join(dir, "warehouse.db");
process.env.ANALYTICS_WORKER = "off";

const { db: warehouse, closeDb } = await import("@/db");
const { addApp } = await import("@/lib/apps/registry");
const { callerForUser } = await import("@/lib/auth/authorize");
const { createUser } = await import("@/lib/auth/users");
const { spawnEmulator } = await import("@/lib/emulator/testing");
const { syncApp } = await import("@/lib/sync");
const { getAppById } = await import("@/lib/apps/registry");
const { evaluateDueRules, evaluateRule, upcomingEvaluations } = await import("./evaluate");
const { deliverDue } = await import("./outbox");
const { createRule, decodeRule, getRule } = await import("./rules");
const { alertRules } = await import("@/db/schema");
const { eq } = await import("drizzle-orm");
const { listHistory } = await import("./history");
const { startReceiver } = await import("./test-receiver");
type Caller = NonNullable<Awaited<ReturnType<typeof callerForUser>>>;

const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z, the end of the emulator's history
const DAY = 86_400;
const DELAY = 60;
const BASE = "https://callboard.example";

interface TruthCall { app: string; start: number; type: string; status: string; audio: number; video: number; durationSeconds: number }
const truth: TruthCall[] = [];
let emu: Awaited<ReturnType<typeof spawnEmulator>>;
let admin: Caller;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const num = (v: unknown) => (v === undefined || v === null || v === "" ? 0 : Number(v));
const hms = (s: string) => s.split(":").map(Number).reduce((a, b) => a * 60 + b, 0);
const r3 = (n: number) => Math.round(n * 1000) / 1000;

beforeAll(async () => {
  emu = await spawnEmulator({ seed: 17, now: NOW, months: 1, apps: [{ appId: "alpha", count: 1800, region: "eu" }, { appId: "beta", count: 400, region: "us" }] });
  const db = warehouse();
  for (const a of emu.apps) {
    addApp(db, { appId: a.appId, name: a.appId, region: a.region, apiKey: a.apiKey, callsUrl: a.callsUrl });
    const r = await syncApp(db, getAppById(db, a.appId)!, { trigger: "test" });
    expect(r.status).toBe("succeeded");
    for (const w of await emu.admin.truth(a.appId)) {
      const started = Math.trunc(num(w.startedAt));
      truth.push({
        app: a.appId, start: started > 0 ? started : Math.trunc(num(w.initiatedAt)), type: String(w.type), status: String(w.status),
        audio: num(w.totalAudioMinutes), video: num(w.totalVideoMinutes), durationSeconds: hms(String(w.totalDuration)),
      });
    }
  }
  const user = await createUser(db, { email: "ops@example.com", password: "ops-password-1", role: "admin" });
  admin = (await callerForUser(db, user.id))!;
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await emu?.stop();
  closeDb();
  rmSync(dir, { recursive: true, force: true });
});

const inDay = (c: TruthCall, dayEnd: number) => c.start >= dayEnd - DAY && c.start < dayEnd;
const callsOn = (dayEnd: number, pred: (c: TruthCall) => boolean = () => true) => truth.filter((c) => c.app === "alpha" && inDay(c, dayEnd) && pred(c));
/** The evaluation time at which the day ending at `dayEnd` is the latest closed window. */
const atDayEnd = (dayEnd: number, plus = 0) => (dayEnd + DELAY) * 1000 + plus;
const evaluate = (nowMs: number) => evaluateDueRules(warehouse(), { nowMs, delaySeconds: DELAY, baseUrl: BASE });

function verified(secret: string, eventBody: { body: string; headers: Record<string, unknown> }) {
  const h = eventBody.headers;
  return new Webhook(secret).verify(eventBody.body, {
    "webhook-id": String(h["webhook-id"]), "webhook-timestamp": String(h["webhook-timestamp"]), "webhook-signature": String(h["webhook-signature"]),
  }) as Record<string, unknown>;
}

describe("a rule over synced calls", () => {
  it("fires once, resolves once, and a restart neither repeats a window nor a notification", async () => {
    // Three days in a row where the first has more calls than the next two.
    const ends = Array.from({ length: 24 }, (_, i) => NOW - (i + 2) * DAY).reverse();
    const start = ends.findIndex((d, i) => i + 2 < ends.length && callsOn(d).length > Math.max(callsOn(ends[i + 1]).length, callsOn(ends[i + 2]).length));
    expect(start).toBeGreaterThanOrEqual(0);
    const [d1, d2, d3] = ends.slice(start, start + 3);
    const [c1, c2, c3] = [d1, d2, d3].map((d) => callsOn(d).length);
    const threshold = Math.max(c2, c3);

    const { rule, secret } = await createRule(warehouse(), admin, {
      name: "Busy alpha", metric: "calls", filters: { app: ["alpha"] }, windowSeconds: DAY, condition: { op: "above", value: threshold },
      destination: { url: receiver.url, allowPrivate: true },
    });
    const before = receiver.received.length;

    const fired = await evaluate(atDayEnd(d1));
    expect(fired).toEqual([{ ruleId: rule.id, window: { from: d1 - DAY, to: d1 }, outcome: "fired", state: "firing", value: c1, calls: c1, note: null }]);
    // Later in the same window, and a second round at once: nothing more to evaluate.
    expect(await evaluate(atDayEnd(d1, 3_600_000))).toEqual([]);
    // What "Evaluate now" then says: the window evaluated, and the next one, due a delay after it closes.
    expect(upcomingEvaluations(warehouse(), { nowMs: atDayEnd(d1, 3_600_000), delaySeconds: DELAY }).find((u) => u.ruleId === rule.id)).toMatchObject({
      lastWindowTo: d1, next: { from: d1, to: d1 + DAY }, dueMs: (d1 + DAY + DELAY) * 1000,
    });
    await deliverDue(warehouse(), { nowMs: atDayEnd(d1) });
    expect(receiver.received.length).toBe(before + 1);

    // Restart: a new connection (and a new analytics store) over the same warehouse.
    closeDb();
    expect(await evaluate(atDayEnd(d1, 60_000))).toEqual([]);
    expect(await deliverDue(warehouse(), { nowMs: atDayEnd(d1, 60_000) })).toEqual([]);
    expect(receiver.received.length).toBe(before + 1);
    // Even asked directly, a window already evaluated is not recorded again.
    const stored = decodeRule(warehouse().select().from(alertRules).where(eq(alertRules.pk, rule.id)).get()!);
    expect(await evaluateRule(warehouse(), stored, { from: d1 - DAY, to: d1 }, { nowMs: atDayEnd(d1), baseUrl: BASE })).toMatchObject({ outcome: "skipped" });

    const resolved = await evaluate(atDayEnd(d2));
    expect(resolved).toMatchObject([{ outcome: "resolved", state: "resolved", value: c2 }]);
    expect(await evaluate(atDayEnd(d3))).toMatchObject([{ outcome: "unchanged", state: "resolved", value: c3 }]);
    await deliverDue(warehouse(), { nowMs: atDayEnd(d3) });

    const sent = receiver.received.slice(before);
    expect(sent).toHaveLength(2);
    const [firing, resolvedMsg] = sent.map((s) => verified(secret!, s));
    expect(firing).toMatchObject({
      type: "alert.firing", id: `evt_${rule.id}_${d1}_firing`, state: "firing", previousState: "ok", value: c1, threshold, calls: c1,
      rule: { id: rule.id, name: "Busy alpha", metric: "calls", windowSeconds: DAY, condition: { op: "above", value: threshold } },
      window: { from: d1 - DAY, to: d1, seconds: DAY },
      link: `${BASE}/calls?app=alpha&from=${d1 - DAY}&to=${d1}`,
    });
    expect(firing.text).toContain(`FIRING: Busy alpha. Calls was ${c1} calls over 1 day`);
    expect(firing.text).toContain(String(firing.link));
    expect(resolvedMsg).toMatchObject({ type: "alert.resolved", state: "resolved", previousState: "firing", value: c2, window: { from: d2 - DAY, to: d2 } });
    expect(sent.map((s) => s.headers["webhook-id"])).toEqual([`evt_${rule.id}_${d1}_firing`, `evt_${rule.id}_${d2}_resolved`]);

    const history = listHistory(warehouse(), admin, { ruleId: rule.id });
    expect(history.map((h) => [h.fromState, h.toState, h.value, h.window.to, h.notification?.status])).toEqual([
      ["firing", "resolved", c2, d2, "delivered"],
      ["ok", "firing", c1, d1, "delivered"],
    ]);
  });

  it("rates, minutes and durations equal the emulator's numbers, under the rule's filters", async () => {
    const day = NOW - 5 * DAY;
    const video = callsOn(day, (c) => c.type === "video");
    const all = callsOn(day);
    const share = (list: TruthCall[], status: string) => r3((list.filter((c) => c.status === status).length / list.length) * 100);
    const cases = [
      { metric: "unansweredRate", filters: { app: ["alpha"], type: "video" }, expected: share(video, "unanswered"), calls: video.length },
      { metric: "rejectedRate", filters: { app: ["alpha"] }, expected: share(all, "rejected"), calls: all.length },
      { metric: "audioMinutes", filters: { app: ["alpha"] }, expected: r3(all.reduce((s, c) => s + c.audio, 0)), calls: all.length },
      { metric: "videoMinutes", filters: { app: ["alpha"], type: "video" }, expected: r3(video.reduce((s, c) => s + c.video, 0)), calls: video.length },
      { metric: "avgDurationSeconds", filters: { app: ["alpha"] }, expected: r3(all.reduce((s, c) => s + c.durationSeconds, 0) / all.length), calls: all.length },
    ];
    for (const c of cases) {
      const { rule } = await createRule(warehouse(), admin, { name: c.metric, metric: c.metric, filters: c.filters, windowSeconds: DAY, condition: { op: "above", value: 0 } });
      const [result] = await evaluateDueRules(warehouse(), { nowMs: atDayEnd(day), delaySeconds: DELAY, ruleId: rule.id });
      expect(result.calls, c.metric).toBe(c.calls);
      expect(result.value, c.metric).toBeCloseTo(c.expected, 2);
      expect(result.outcome, c.metric).toBe(c.expected > 0 ? "fired" : "unchanged");
      expect(getRule(warehouse(), admin, rule.id).lastEvaluation).toMatchObject({ windowFrom: day - DAY, windowTo: day, calls: c.calls });
    }
  });

  it("a window with fewer calls than the minimum gives no verdict, and fires nothing", async () => {
    const day = NOW - 6 * DAY;
    const n = callsOn(day).length;
    const { rule } = await createRule(warehouse(), admin, {
      name: "quiet", metric: "unansweredRate", filters: { app: ["alpha"] }, windowSeconds: DAY, condition: { op: "above", value: 0 }, minCalls: n + 1,
      destination: { url: receiver.url, allowPrivate: true },
    });
    const [result] = await evaluateDueRules(warehouse(), { nowMs: atDayEnd(day), delaySeconds: DELAY, ruleId: rule.id });
    expect(result).toMatchObject({ outcome: "no_verdict", state: "ok", calls: n, note: `too few calls (${n} < ${n + 1})` });
    expect(listHistory(warehouse(), admin, { ruleId: rule.id })).toEqual([]);
    expect(await deliverDue(warehouse(), { nowMs: atDayEnd(day) })).toEqual([]);
  });

  it("a change rule compares with the previous window", async () => {
    // The two days with the largest relative change among the last three weeks.
    const pairs = Array.from({ length: 20 }, (_, i) => NOW - (i + 2) * DAY).map((d) => ({ d, now: callsOn(d).length, prev: callsOn(d - DAY).length }));
    const best = pairs.filter((p) => p.prev > 0).sort((a, b) => Math.abs(b.now - b.prev) / b.prev - Math.abs(a.now - a.prev) / a.prev)[0];
    const pct = r3(((best.now - best.prev) / best.prev) * 100);
    expect(Math.abs(pct)).toBeGreaterThan(0);
    const make = async (percent: number, direction: "up" | "down" | "either") =>
      (await createRule(warehouse(), admin, { name: `change ${percent} ${direction}`, metric: "calls", filters: { app: ["alpha"] }, windowSeconds: DAY, condition: { op: "change", percent, direction } })).rule.id;
    const below = await make(Math.abs(pct) / 2, "either");
    const above = await make(Math.abs(pct) * 2, "either");
    const wrongWay = await make(Math.abs(pct) / 2, pct > 0 ? "down" : "up");
    const results = new Map((await evaluateDueRules(warehouse(), { nowMs: atDayEnd(best.d), delaySeconds: DELAY })).map((r) => [r.ruleId, r]));
    expect(results.get(below)).toMatchObject({ outcome: "fired", value: best.now });
    expect(results.get(above)).toMatchObject({ outcome: "unchanged", state: "ok" });
    expect(results.get(wrongWay)).toMatchObject({ outcome: "unchanged", state: "ok" });
    const [event] = listHistory(warehouse(), admin, { ruleId: below });
    expect(event).toMatchObject({ value: best.now, previousValue: best.prev, threshold: Math.abs(pct) / 2, window: { from: best.d - DAY, to: best.d } });
  });

  it("two evaluators racing over one window record one transition and one notification", async () => {
    const day = NOW - 8 * DAY;
    const { rule } = await createRule(warehouse(), admin, {
      name: "race", metric: "calls", filters: { app: ["alpha"] }, windowSeconds: DAY, condition: { op: "above", value: 0 }, destination: { url: receiver.url, allowPrivate: true },
    });
    const { openDatabase } = await import("@/db/client");
    const second = openDatabase(process.env.DATABASE_PATH!);
    try {
      const runs = await Promise.all([
        evaluateDueRules(warehouse(), { nowMs: atDayEnd(day), delaySeconds: DELAY, ruleId: rule.id }),
        evaluateDueRules(second, { nowMs: atDayEnd(day), delaySeconds: DELAY, ruleId: rule.id }),
      ]);
      expect(runs.flat().filter((r) => r.outcome === "fired")).toHaveLength(1);
    } finally {
      second.$client.close();
    }
    expect(listHistory(warehouse(), admin, { ruleId: rule.id })).toHaveLength(1);
    const before = receiver.received.length;
    await deliverDue(warehouse(), { nowMs: atDayEnd(day) });
    expect(receiver.received.slice(before).filter((r) => String(r.headers["webhook-id"]).startsWith(`evt_${rule.id}_`))).toHaveLength(1);
  });
});

describe("failed sync runs", () => {
  it("counts the runs of an app that failed in the window", async () => {
    const db = warehouse();
    const alpha = emu.apps.find((a) => a.appId === "alpha")!;
    addApp(db, { appId: "gamma", name: "gamma", region: "eu", apiKey: "wrong-key", callsUrl: alpha.callsUrl.replace("alpha", "gamma") });
    const run = await syncApp(db, getAppById(db, "gamma")!, { trigger: "test" });
    expect(run.status).toBe("failed");
    const { rule } = await createRule(db, admin, { name: "gamma sync", metric: "failedSyncRuns", filters: { app: ["gamma"] }, windowSeconds: DAY, condition: { op: "above", value: 0 } });
    const dayEnd = Math.ceil(Date.now() / 1000 / DAY) * DAY;
    const [result] = await evaluateDueRules(db, { nowMs: atDayEnd(dayEnd), delaySeconds: DELAY, ruleId: rule.id });
    expect(result).toMatchObject({ outcome: "fired", value: 1 });
    // The next day has none: resolved.
    const [next] = await evaluateDueRules(db, { nowMs: atDayEnd(dayEnd + DAY), delaySeconds: DELAY, ruleId: rule.id });
    expect(next).toMatchObject({ outcome: "resolved", value: 0 });
  });
});
