import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { alertOutbox } from "@/db/schema";
import { callerForUser, type Caller } from "@/lib/auth/authorize";
import { freshDb, seedApp, useTestEnv } from "@/lib/auth/test-support";
import { createUser } from "@/lib/auth/users";
import { deliverDue, GIVE_UP_AFTER_MS, nextAttemptAt, RETRY_DELAYS_MS } from "./outbox";
import { createRule, updateRule } from "./rules";
import { newSigningSecret, sign } from "./signing";
import { startReceiver, type Receiver } from "./test-receiver";

/**
 * The durable outbox against a real local receiver: Standard Webhooks signatures checked
 * by the `standardwebhooks` package, retries with backoff until the receiver answers 2xx,
 * a day's limit, one message per event id, and messages that outlive the process.
 */
let ctx: ReturnType<typeof freshDb>;
let db: Db;
let admin: Caller;
let receiver: Receiver;
const T0 = 1_790_000_000_000;

beforeAll(async () => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  seedApp(db, "alpha");
  const user = await createUser(db, { email: "ops@example.com", password: "ops-password-1", role: "admin" });
  admin = (await callerForUser(db, user.id))!;
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  ctx.dispose();
});

/** A rule notifying the receiver, and one message of it in the outbox. */
async function ruleWithMessage(eventId: string, createdMs = T0): Promise<{ ruleId: number; secret: string; body: string }> {
  const { rule, secret } = await createRule(db, admin, {
    name: `rule for ${eventId}`, metric: "calls", windowSeconds: 300, condition: { op: "above", value: 1 },
    filters: { app: ["alpha"] }, destination: { url: receiver.url, allowPrivate: true },
  });
  const body = JSON.stringify({ type: "alert.firing", id: eventId, text: `fired ${eventId}`, value: 3 });
  const inserted = db.insert(alertOutbox).values({ rulePk: rule.id, eventId, body, createdMs, nextAttemptMs: createdMs }).onConflictDoNothing().run();
  expect(inserted.changes).toBe(1);
  return { ruleId: rule.id, secret: secret!, body };
}

const row = (eventId: string) => db.select().from(alertOutbox).where(eq(alertOutbox.eventId, eventId)).get()!;
const receivedFor = (eventId: string) => receiver.received.filter((r) => r.headers["webhook-id"] === eventId);

describe("signature", () => {
  it("matches the Standard Webhooks reference vector", () => {
    // The example of the Standard Webhooks specification's test suite.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const body = '{"test": 2432232314}';
    expect(sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("is verified by the standardwebhooks package; a changed body, id or secret is not", async () => {
    const { secret, body } = await ruleWithMessage("evt_sig_1");
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    await deliverDue(db, { nowMs: T0 });
    const [got] = receivedFor("evt_sig_1");
    expect(got.body).toBe(body);
    expect(got.headers["content-type"]).toBe("application/json");
    const headers = {
      "webhook-id": String(got.headers["webhook-id"]),
      "webhook-timestamp": String(got.headers["webhook-timestamp"]),
      "webhook-signature": String(got.headers["webhook-signature"]),
    };
    expect(new Webhook(secret).verify(got.body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(got.body.replace("3", "4"), headers)).toThrow();
    expect(() => new Webhook(secret).verify(got.body, { ...headers, "webhook-id": "evt_other" })).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify(got.body, headers)).toThrow();
    expect(row("evt_sig_1")).toMatchObject({ status: "delivered", attempts: 1, lastStatus: 200 });
  });

  it("a rotated secret signs the next attempt; the old one no longer verifies", async () => {
    const { ruleId, secret: old } = await ruleWithMessage("evt_rotate");
    const { secret: rotated } = await updateRule(db, admin, ruleId, { rotateSecret: true });
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(old);
    await deliverDue(db, { nowMs: T0 });
    const [got] = receivedFor("evt_rotate");
    const headers = { "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]) };
    expect(() => new Webhook(rotated!).verify(got.body, headers)).not.toThrow();
    expect(() => new Webhook(old).verify(got.body, headers)).toThrow();
  });
});

describe("retries", () => {
  it("back off after each failure and stop once delivered: fails twice, then succeeds", async () => {
    const { secret } = await ruleWithMessage("evt_retry");
    receiver.answers = [503, 500];
    let out = await deliverDue(db, { nowMs: T0 });
    expect(out).toEqual([{ eventId: "evt_retry", status: "pending", attempts: 1, httpStatus: 503, error: "the destination answered 503" }]);
    expect(row("evt_retry").nextAttemptMs).toBe(T0 + RETRY_DELAYS_MS[0]);
    // Not due yet: nothing is sent.
    expect(await deliverDue(db, { nowMs: T0 + RETRY_DELAYS_MS[0] - 1 })).toEqual([]);
    out = await deliverDue(db, { nowMs: T0 + RETRY_DELAYS_MS[0] });
    expect(out[0]).toMatchObject({ status: "pending", attempts: 2, httpStatus: 500 });
    expect(row("evt_retry").nextAttemptMs).toBe(T0 + RETRY_DELAYS_MS[0] + RETRY_DELAYS_MS[1]);
    out = await deliverDue(db, { nowMs: T0 + RETRY_DELAYS_MS[0] + RETRY_DELAYS_MS[1] });
    expect(out[0]).toMatchObject({ status: "delivered", attempts: 3, httpStatus: 200 });
    expect(await deliverDue(db, { nowMs: T0 + GIVE_UP_AFTER_MS })).toEqual([]);
    // Three attempts reached the receiver, every one the same event id, each validly signed.
    const got = receivedFor("evt_retry");
    expect(got).toHaveLength(3);
    for (const g of got) {
      new Webhook(secret).verify(g.body, { "webhook-id": String(g.headers["webhook-id"]), "webhook-timestamp": String(g.headers["webhook-timestamp"]), "webhook-signature": String(g.headers["webhook-signature"]) });
    }
  });

  it("follow the schedule for a day, with one last attempt at the deadline, then give up", () => {
    let now = T0;
    const attempts: number[] = [];
    for (let n = 1; ; n++) {
      const next = nextAttemptAt(T0, n, now);
      if (next === null) break;
      attempts.push(next - T0);
      now = next;
    }
    expect(attempts.slice(0, 4)).toEqual([5_000, 35_000, 155_000, 755_000]);
    expect(attempts.at(-1)).toBe(GIVE_UP_AFTER_MS);
    expect(attempts.every((t, i) => i === 0 || t > attempts[i - 1])).toBe(true);
    expect(attempts.length).toBeLessThan(15);
  });

  it("a destination that never answers 2xx is marked failed after a day", async () => {
    await ruleWithMessage("evt_dead");
    receiver.fallback = 500;
    try {
      let now = T0;
      for (let i = 0; i < 20 && row("evt_dead").status === "pending"; i++) {
        await deliverDue(db, { nowMs: now });
        now = row("evt_dead").nextAttemptMs;
      }
    } finally {
      receiver.fallback = 200;
    }
    const dead = row("evt_dead");
    expect(dead.status).toBe("failed");
    expect(dead.lastAttemptMs).toBe(T0 + GIVE_UP_AFTER_MS);
    expect(dead.lastError).toBe("the destination answered 500");
    expect(receivedFor("evt_dead")).toHaveLength(dead.attempts);
  });
});

describe("durability and deduplication", () => {
  it("one message per event id", async () => {
    const { ruleId, body } = await ruleWithMessage("evt_once");
    const again = db.insert(alertOutbox).values({ rulePk: ruleId, eventId: "evt_once", body, createdMs: T0, nextAttemptMs: T0 }).onConflictDoNothing().run();
    expect(again.changes).toBe(0);
    await deliverDue(db, { nowMs: T0 });
    expect(receivedFor("evt_once")).toHaveLength(1);
  });

  it("two dispatchers at once send a message once", async () => {
    await ruleWithMessage("evt_race");
    const second = openDatabase(ctx.file);
    try {
      const [a, b] = await Promise.all([deliverDue(db, { nowMs: T0 }), deliverDue(second, { nowMs: T0 })]);
      expect([...a, ...b].filter((o) => o.eventId === "evt_race")).toHaveLength(1);
    } finally {
      second.$client.close();
    }
    expect(receivedFor("evt_race")).toHaveLength(1);
  });

  it("a pending message outlives the process: a new connection delivers it at its next attempt", async () => {
    await ruleWithMessage("evt_restart");
    receiver.answers = [500];
    await deliverDue(db, { nowMs: T0 });
    expect(row("evt_restart").status).toBe("pending");
    const restarted = openDatabase(ctx.file);
    try {
      const out = await deliverDue(restarted, { nowMs: T0 + RETRY_DELAYS_MS[0] });
      expect(out.find((o) => o.eventId === "evt_restart")).toMatchObject({ status: "delivered", attempts: 2 });
    } finally {
      restarted.$client.close();
    }
    expect(receivedFor("evt_restart")).toHaveLength(2);
  });

  it("a message of a rule whose destination was removed fails without a request", async () => {
    const { ruleId } = await ruleWithMessage("evt_nodest");
    await updateRule(db, admin, ruleId, { destination: null });
    receiver.answers = [];
    const out = await deliverDue(db, { nowMs: T0 });
    expect(out.find((o) => o.eventId === "evt_nodest")).toMatchObject({ status: "failed", attempts: 1, error: "the rule has no destination any more" });
    expect(receivedFor("evt_nodest")).toHaveLength(0);
  });
});
