import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { callerForUser, type Caller } from "@/lib/auth/authorize";
import { createUser } from "@/lib/auth/users";
import { chatEvent, sendDeliveries, type Delivery } from "@/lib/emulator/webhooks";
import { resetEnvForTests } from "@/lib/config/env";
import { recordingGenerated } from "@/lib/ingest/fixtures";
import { AUTH, postJson, startHarness, type Harness } from "@/lib/ingest/test-harness";
import { evaluateDueRules } from "./evaluate";
import { deliverDue } from "./outbox";
import { createRule } from "./rules";
import { startReceiver, type Receiver } from "./test-receiver";

/**
 * A burst of webhook deliveries through the real ingest server (HTTP) fires a
 * "deliveries received" rule once — repeats of an event count once — and the quiet
 * window after it resolves it once, across a restart of the evaluator.
 */
const WINDOW = 86_400;
const DELAY = 60;
let h: Harness;
let admin: Caller;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness();
  // Reports (the recordings metric) read the warehouse at DATABASE_PATH: the harness's.
  process.env.DATABASE_PATH = h.file;
  process.env.ANALYTICS_WORKER = "off";
  resetEnvForTests();
  const user = await createUser(h.db, { email: "ops@example.com", password: "ops-password-1", role: "admin" });
  admin = (await callerForUser(h.db, user.id))!;
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

function burst(appId: string, n: number, at: number): Delivery[] {
  const ctx = { appId, region: "us" as const, webhook: "wh-callboard" };
  return Array.from({ length: n }, (_, i) => chatEvent("message_sent", { ctx, at: at + i, users: ["ann", "bob", "cid"], seed: 3 }));
}

describe("webhook bursts", () => {
  it("fire once on the burst's window, resolve once on the next, and a restart repeats neither", async () => {
    const { rule, secret } = await createRule(h.db, admin, {
      name: "Webhook storm", metric: "webhookDeliveries", filters: { app: ["acme"] }, windowSeconds: WINDOW, condition: { op: "above", value: 100 },
      destination: { url: receiver.url, allowPrivate: true },
    });
    // A quieter app's deliveries do not count for acme.
    const other = await sendDeliveries(`${h.baseUrl}/api/webhooks/open-app`, burst("open-app", 30, 1_766_000_000), { concurrency: 4 });
    expect(other.ok).toBe(30);

    const startedMs = Date.now();
    const events = burst("acme", 150, 1_766_000_000);
    // Every fifth event delivered twice, as the platform may: answered 200, counted once.
    const withRepeats = [...events, ...events.filter((_, i) => i % 5 === 0)];
    const report = await sendDeliveries(`${h.baseUrl}/api/webhooks/acme`, withRepeats, { concurrency: 8, headers: { authorization: AUTH } });
    expect(report.ok).toBe(withRepeats.length);
    const windowEnd = Math.ceil(Date.now() / 1000 / WINDOW) * WINDOW;
    // The burst lies in one window (a test run across midnight UTC would split it).
    expect(Math.floor(startedMs / 1000 / WINDOW)).toBe(windowEnd / WINDOW - 1);

    const at = (end: number, plusMs = 0) => (end + DELAY) * 1000 + plusMs;
    const fired = await evaluateDueRules(h.db, { nowMs: at(windowEnd), delaySeconds: DELAY });
    expect(fired).toMatchObject([{ ruleId: rule.id, outcome: "fired", value: 150, window: { from: windowEnd - WINDOW, to: windowEnd } }]);
    await deliverDue(h.db, { nowMs: at(windowEnd) });

    // The evaluator restarts: its own new connection, the same warehouse.
    const restarted: Db = openDatabase(h.file);
    try {
      expect(await evaluateDueRules(restarted, { nowMs: at(windowEnd, 5_000), delaySeconds: DELAY })).toEqual([]);
      expect(await deliverDue(restarted, { nowMs: at(windowEnd, 5_000) })).toEqual([]);
      expect(await evaluateDueRules(restarted, { nowMs: at(windowEnd + WINDOW), delaySeconds: DELAY })).toMatchObject([{ outcome: "resolved", value: 0 }]);
      expect(await evaluateDueRules(restarted, { nowMs: at(windowEnd + 2 * WINDOW), delaySeconds: DELAY })).toMatchObject([{ outcome: "unchanged", state: "resolved" }]);
      await deliverDue(restarted, { nowMs: at(windowEnd + 2 * WINDOW) });
    } finally {
      restarted.$client.close();
    }

    expect(receiver.received).toHaveLength(2);
    const bodies = receiver.received.map((r) =>
      new Webhook(secret!).verify(r.body, {
        "webhook-id": String(r.headers["webhook-id"]), "webhook-timestamp": String(r.headers["webhook-timestamp"]), "webhook-signature": String(r.headers["webhook-signature"]),
      }),
    );
    expect(bodies).toMatchObject([
      { type: "alert.firing", value: 150, threshold: 100, unit: "deliveries", link: expect.stringMatching(/\/events\?app=acme$/) },
      { type: "alert.resolved", value: 0 },
    ]);
  });

  it("recordings from recording webhooks count in the window of their start time, each once", async () => {
    const day = 1_766_016_000; // 2025-12-18T00:00:00Z
    const { rule } = await createRule(h.db, admin, { name: "Recordings", metric: "recordings", filters: { app: ["acme"] }, windowSeconds: WINDOW, condition: { op: "above", value: 10 } });
    const init = { appId: "acme" };
    // 12 recordings that day, two of them delivered twice, and one the day before.
    const sessions = Array.from({ length: 12 }, (_, i) => recordingGenerated(init, `rec-${i}`, day + 600 * i));
    for (const d of [...sessions, sessions[0], sessions[5], recordingGenerated(init, "rec-before", day - 60)]) {
      expect((await postJson(h.baseUrl, "acme", d)).status).toBe(200);
    }
    const [result] = await evaluateDueRules(h.db, { nowMs: (day + WINDOW + DELAY) * 1000, delaySeconds: DELAY, ruleId: rule.id });
    expect(result).toMatchObject({ outcome: "fired", value: 12, window: { from: day, to: day + WINDOW } });
  });
});
