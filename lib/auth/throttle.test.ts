import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "@/db/client";
import { clientAddress, PEER_HEADER } from "./client-address";
import { verifyCredentials } from "./credentials";
import { freshDb, useTestEnv } from "./test-support";
import { checkThrottle, clearAccountFailures, recordFailure, THROTTLE } from "./throttle";
import { createUser, updateUser } from "./users";

let ctx: ReturnType<typeof freshDb>;
let db: Db;

beforeAll(async () => {
  useTestEnv();
  ctx = freshDb();
  db = ctx.db;
  await createUser(db, { email: "carol@example.com", password: "carol-password", role: "viewer" });
});
afterAll(() => ctx.dispose());

describe("sign-in throttle", () => {
  it("limits an account after 5 failures in 15 minutes, and lets go when they age out", () => {
    const now = 1_800_000_000_000;
    const s = { email: "dave@example.com", address: "198.51.100.1" };
    for (let i = 0; i < THROTTLE.perAccount - 1; i++) recordFailure(db, s, now + i);
    expect(checkThrottle(db, s, now + 10).limited).toBe(false);
    recordFailure(db, s, now + 10);
    const state = checkThrottle(db, { email: "DAVE@example.com", address: "198.51.100.2" }, now + 20);
    expect(state).toMatchObject({ limited: true, scope: "account" });
    expect(state.limited && state.retryAfterSeconds).toBe(Math.ceil((THROTTLE.windowMs - 20) / 1000));
    expect(checkThrottle(db, s, now + THROTTLE.windowMs + 11).limited).toBe(false);
  });

  it("limits an address after 20 failures across accounts", () => {
    const now = 1_810_000_000_000;
    for (let i = 0; i < THROTTLE.perAddress; i++) recordFailure(db, { email: `spray${i}@example.com`, address: "203.0.113.7" }, now);
    expect(checkThrottle(db, { email: "fresh@example.com", address: "203.0.113.7" }, now + 1)).toMatchObject({ limited: true, scope: "address" });
    expect(checkThrottle(db, { email: "fresh@example.com", address: "203.0.113.8" }, now + 1).limited).toBe(false);
  });

  it("is stored in the warehouse: a restart (new connection) keeps it", () => {
    const now = Date.now();
    const s = { email: "erin@example.com", address: "198.51.100.9" };
    for (let i = 0; i < THROTTLE.perAccount; i++) recordFailure(db, s, now);
    const reopened = openDatabase(ctx.file);
    try {
      expect(checkThrottle(reopened, s).limited).toBe(true);
    } finally {
      reopened.$client.close();
    }
    clearAccountFailures(db, "ERIN@example.com");
    expect(checkThrottle(db, s).limited).toBe(false);
  });

  it("refuses a throttled account even with the right password, and a success clears the account", async () => {
    const address = "192.0.2.50";
    for (let i = 0; i < THROTTLE.perAccount - 1; i++) {
      expect(await verifyCredentials(db, { email: "carol@example.com", password: "wrong", address })).toEqual({ ok: false, reason: "invalid" });
    }
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "carol-password", address })).toMatchObject({ ok: true });
    for (let i = 0; i < THROTTLE.perAccount; i++) await verifyCredentials(db, { email: "carol@example.com", password: "wrong", address });
    const refused = await verifyCredentials(db, { email: "carol@example.com", password: "carol-password", address });
    expect(refused).toMatchObject({ ok: false, reason: "throttled", throttle: { scope: "account" } });
    clearAccountFailures(db, "carol@example.com");
  });

  it("answers the same for unknown email, wrong password and disabled account", async () => {
    const address = "192.0.2.60";
    expect(await verifyCredentials(db, { email: "nobody@example.com", password: "carol-password", address })).toEqual({ ok: false, reason: "invalid" });
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "nope-nope", address })).toEqual({ ok: false, reason: "invalid" });
    await updateUser(db, "carol@example.com", { disabled: true });
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "carol-password", address })).toEqual({ ok: false, reason: "invalid" });
    expect(await verifyCredentials(db, { email: 42, password: null, address })).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("client address", () => {
  const h = (init: Record<string, string>) => new Headers(init);
  it("uses the socket peer and ignores a forged X-Forwarded-For from a remote client", () => {
    expect(clientAddress(h({ [PEER_HEADER]: "198.51.100.4", "x-forwarded-for": "1.2.3.4" }))).toBe("198.51.100.4");
    expect(clientAddress(h({ [PEER_HEADER]: "::ffff:198.51.100.4" }))).toBe("198.51.100.4");
  });
  it("trusts only the last X-Forwarded-For hop, and only behind a loopback proxy", () => {
    expect(clientAddress(h({ [PEER_HEADER]: "127.0.0.1", "x-forwarded-for": "1.2.3.4, 198.51.100.5" }))).toBe("198.51.100.5");
    expect(clientAddress(h({ [PEER_HEADER]: "::1" }))).toBe("::1");
    expect(clientAddress(h({ "x-forwarded-for": "9.9.9.9, 10.0.0.1" }))).toBe("10.0.0.1");
    expect(clientAddress(h({}))).toBe("unknown");
  });
});
