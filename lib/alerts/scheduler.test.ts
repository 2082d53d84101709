import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import type { Db } from "@/db/client";
import { alertRules } from "@/db/schema";
import { callerForUser } from "@/lib/auth/authorize";
import { freshDb, seedApp, useTestEnv } from "@/lib/auth/test-support";
import { createUser } from "@/lib/auth/users";
import { createRule } from "./rules";
import { startAlertScheduler } from "./scheduler";
import { startReceiver, type Receiver } from "./test-receiver";

/** The in-server schedule evaluates a new rule and sends its notification by itself. */
let ctx: ReturnType<typeof freshDb>;
let db: Db;
let receiver: Receiver;

beforeAll(async () => {
  useTestEnv({ ALERTS_DELAY_SECONDS: "0" });
  ctx = freshDb();
  db = ctx.db;
  seedApp(db, "alpha");
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  ctx.dispose();
});

it("evaluates due rules and delivers their notifications on its own, then stops", async () => {
  const user = await createUser(db, { email: "ops@example.com", password: "ops-password-1", role: "admin" });
  // Deliveries of alpha below 1 in the last closed 5 minutes: none arrived, so it fires.
  const { rule } = await createRule(db, (await callerForUser(db, user.id))!, {
    name: "quiet webhooks", metric: "webhookDeliveries", filters: { app: ["alpha"] }, windowSeconds: 300, condition: { op: "below", value: 1 },
    destination: { url: receiver.url, allowPrivate: true },
  });
  const scheduler = startAlertScheduler(db, { intervalSeconds: 1 });
  try {
    await vi.waitFor(() => expect(receiver.received.length).toBe(1), { timeout: 20_000, interval: 100 });
  } finally {
    await scheduler.stop();
  }
  const stored = db.select().from(alertRules).where(eq(alertRules.pk, rule.id)).get()!;
  expect(stored.state).toBe("firing");
  expect(JSON.parse(receiver.received[0].body)).toMatchObject({ type: "alert.firing", value: 0, rule: { id: rule.id } });
});
