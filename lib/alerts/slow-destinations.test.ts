import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Db } from "@/db/client";
import { alertOutbox, alertRules } from "@/db/schema";
import { callerForUser, type Caller } from "@/lib/auth/authorize";
import { freshDb, seedApp, useTestEnv } from "@/lib/auth/test-support";
import { createUser } from "@/lib/auth/users";
import { deliverDue } from "./outbox";
import { createRule } from "./rules";
import { startAlertScheduler } from "./scheduler";
import { startReceiver, type Receiver } from "./test-receiver";

/**
 * Issue 30 item 4: destinations that trickle or never answer, over real loopback
 * sockets. Each attempt has a total deadline, its answer's body is never awaited,
 * destinations do not wait for each other, and evaluation never waits on delivery.
 */
let ctx: ReturnType<typeof freshDb>;
let db: Db;
let admin: Caller;
let receiver: Receiver;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  useTestEnv({ ALERTS_DELAY_SECONDS: "0" });
  ctx = freshDb();
  db = ctx.db;
  seedApp(db, "alpha");
  const user = await createUser(db, { email: "ops@example.com", password: "ops-password-1", role: "admin" });
  admin = (await callerForUser(db, user.id))!;
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  await receiver.close();
  ctx.dispose();
});

/** A raw TCP destination: `onSocket` decides what (if anything) it ever writes. Tracks open sockets. */
async function rawDestination(onSocket: (socket: Socket) => void): Promise<{ url: string; open: Set<Socket>; connections: () => number }> {
  const open = new Set<Socket>();
  let connections = 0;
  const server: NetServer = createNetServer((socket) => {
    connections++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => undefined);
    onSocket(socket);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(async () => {
    for (const s of open) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, open, connections: () => connections };
}

/** Writes `text` one byte every `everyMs`, then keeps trickling spaces until the socket goes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    socket.write(i < text.length ? text[i++] : " ");
  }, everyMs);
  socket.on("close", () => clearInterval(timer));
}

let seq = 0;
async function ruleWithMessage(url: string): Promise<{ ruleId: number; eventId: string }> {
  const eventId = `evt_slow_${++seq}`;
  const { rule } = await createRule(db, admin, {
    name: `rule ${eventId}`, metric: "calls", windowSeconds: 300, condition: { op: "above", value: 1 },
    filters: { app: ["alpha"] }, destination: { url, allowPrivate: true },
  });
  const now = Date.now() - 1000 + seq; // in the order made
  db.insert(alertOutbox).values({ rulePk: rule.id, eventId, body: JSON.stringify({ id: eventId }), createdMs: now, nextAttemptMs: now }).run();
  return { ruleId: rule.id, eventId };
}
const row = (eventId: string) => db.select().from(alertOutbox).where(eq(alertOutbox.eventId, eventId)).get()!;

describe("one delivery attempt", () => {
  it("is cut at its total deadline when the destination trickles its answer's head byte by byte", async () => {
    // A byte every 200 ms: the socket is never idle for the deadline, so only a total deadline ends it.
    const slow = await rawDestination((socket) => socket.once("data", () => trickle(socket, "HTTP/1.1 200 OK\r\nX-Slow: ", 200)));
    const { eventId } = await ruleWithMessage(slow.url);
    const [outcome] = await deliverDue(db, { timeoutMs: 1500 });
    expect(outcome).toMatchObject({ eventId, status: "pending", attempts: 1, httpStatus: null, error: "no answer within 1.5 s" });
    expect(row(eventId)).toMatchObject({ status: "pending", lastError: "no answer within 1.5 s" });
    await vi.waitFor(() => expect(slow.open.size).toBe(0));
  });

  it("counts as delivered at its 2xx head, without waiting for a body the destination trickles", async () => {
    const bodies: HttpServer = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/plain" });
      res.flushHeaders();
      const timer = setInterval(() => res.write("."), 200);
      res.on("close", () => clearInterval(timer));
    });
    await new Promise<void>((r) => bodies.listen(0, "127.0.0.1", r));
    closers.push(async () => {
      bodies.closeAllConnections();
      await new Promise((r) => bodies.close(r));
    });
    const { eventId } = await ruleWithMessage(`http://127.0.0.1:${(bodies.address() as AddressInfo).port}/hook`);
    const [outcome] = await deliverDue(db, { timeoutMs: 60_000 });
    expect(outcome).toMatchObject({ eventId, status: "delivered", httpStatus: 200 });
  });
});

describe("destinations", () => {
  it("do not wait for each other: a healthy one is sent to while a dead one is still held", async () => {
    const dead = await rawDestination(() => undefined); // accepts, never answers
    const first = await ruleWithMessage(dead.url); // older: first in the queue
    const second = await ruleWithMessage(receiver.url);
    const before = receiver.received.length;
    const pass = deliverDue(db, { timeoutMs: 4000 });
    await vi.waitFor(() => expect(receiver.received.length).toBe(before + 1), { timeout: 10_000, interval: 20 });
    const deadStillOpenWhenHealthyArrived = dead.open.size === 1;
    const outcomes = await pass;
    expect(deadStillOpenWhenHealthyArrived).toBe(true);
    expect(outcomes.find((o) => o.eventId === second.eventId)).toMatchObject({ status: "delivered" });
    expect(outcomes.find((o) => o.eventId === first.eventId)).toMatchObject({ status: "pending", error: "no answer within 4 s" });
  });
});

describe("the schedule", () => {
  it("evaluates a new rule while a delivery to a dead destination is still held", async () => {
    db.delete(alertOutbox).run();
    db.update(alertRules).set({ enabled: false }).run();
    const dead = await rawDestination(() => undefined);
    // Deliveries of alpha below 1 in the last closed 5 minutes: none arrived, so each fires at its first evaluation.
    const quiet = { metric: "webhookDeliveries", filters: { app: ["alpha"] }, windowSeconds: 300, condition: { op: "below", value: 1 } } as const;
    await createRule(db, admin, { name: "to a dead end", ...quiet, destination: { url: dead.url, allowPrivate: true } });
    const scheduler = startAlertScheduler(db, { intervalSeconds: 1 });
    try {
      await vi.waitFor(() => expect(dead.connections()).toBe(1), { timeout: 15_000, interval: 50 });
      const before = receiver.received.length;
      const { rule } = await createRule(db, admin, { name: "new rule", ...quiet, destination: { url: receiver.url, allowPrivate: true } });
      await vi.waitFor(() => expect(receiver.received.length).toBe(before + 1), { timeout: 15_000, interval: 50 });
      // The dead destination's attempt (10 s deadline) is still held: evaluation and the other delivery did not wait for it.
      expect(dead.open.size).toBe(1);
      expect(db.select().from(alertRules).where(eq(alertRules.pk, rule.id)).get()!.state).toBe("firing");
    } finally {
      await scheduler.stop();
    }
  });
});
