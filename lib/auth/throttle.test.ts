import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { clientAddress, PEER_HEADER } from "./client-address";
import { listAudit } from "./audit";
import { verifyCredentials } from "./credentials";
import { freshState, STATE_DIALECTS, useTestEnv } from "./test-support";
import { checkThrottle, clearAccountFailures, recordFailure, THROTTLE } from "./throttle";
import { createUser, updateUser } from "./users";

describe.each(STATE_DIALECTS)("sign-in throttle (state on %s)", (dialect) => {
  let ctx: Awaited<ReturnType<typeof freshState>>;
  let db: Db;

  beforeAll(async () => {
    useTestEnv();
    ctx = await freshState(dialect);
    db = ctx.db;
    await createUser(db, { email: "carol@example.com", password: "carol-password", role: "viewer" });
  });
  afterAll(() => ctx.dispose());

  it("limits an account from one address after 5 failures in 15 minutes, not the account from elsewhere, and lets go when they age out", async () => {
    const now = 1_800_000_000_000;
    const s = { email: "dave@example.com", address: "198.51.100.1" };
    for (let i = 0; i < THROTTLE.perAccountAndAddress - 1; i++) expect(await recordFailure(db, s, now + i)).toBe(false);
    expect((await checkThrottle(db, s, now + 10)).limited).toBe(false);
    expect(await recordFailure(db, s, now + 10)).toBe(true); // the failure that reaches the limit, audited once
    expect(await recordFailure(db, s, now + 11)).toBe(false);
    const state = await checkThrottle(db, { email: "DAVE@example.com", address: "198.51.100.1" }, now + 20);
    expect(state).toMatchObject({ limited: true, scope: "account_address" });
    expect(state.limited && state.retryAfterSeconds).toBe(Math.ceil((THROTTLE.windowMs - 20) / 1000));
    // The same account from another address: slowed down, never refused.
    expect(await checkThrottle(db, { email: "dave@example.com", address: "198.51.100.2" }, now + 20)).toEqual({ limited: false, delayMs: 2 * THROTTLE.slowStepMs });
    expect(await checkThrottle(db, s, now + THROTTLE.windowMs + 12)).toEqual({ limited: false, delayMs: 0 });
  });

  it("slows an account down as failures from many addresses add up, at most slowMaxMs, and a success clears it", async () => {
    const now = 1_805_000_000_000;
    const email = "frank@example.com";
    const at = (i: number) => ({ email, address: `198.51.100.${100 + i}` });
    for (let i = 0; i < 4; i++) await recordFailure(db, at(i), now);
    expect(await checkThrottle(db, at(99), now + 1)).toEqual({ limited: false, delayMs: 0 });
    await recordFailure(db, at(4), now);
    expect(await checkThrottle(db, at(99), now + 1)).toEqual({ limited: false, delayMs: THROTTLE.slowStepMs });
    for (let i = 5; i < 30; i++) await recordFailure(db, at(i), now);
    expect(await checkThrottle(db, at(99), now + 1)).toEqual({ limited: false, delayMs: THROTTLE.slowMaxMs });
    for (let i = 0; i < 5; i++) await recordFailure(db, at(0), now);
    expect(await checkThrottle(db, at(0), now + 1)).toMatchObject({ limited: true, scope: "account_address" });
    await clearAccountFailures(db, email, at(0).address);
    expect(await checkThrottle(db, at(0), now + 2)).toEqual({ limited: false, delayMs: 0 });
  });

  it("limits an address after 20 failures across accounts", async () => {
    const now = 1_810_000_000_000;
    for (let i = 0; i < THROTTLE.perAddress; i++) await recordFailure(db, { email: `spray${i}@example.com`, address: "203.0.113.7" }, now);
    expect(await checkThrottle(db, { email: "fresh@example.com", address: "203.0.113.7" }, now + 1)).toMatchObject({ limited: true, scope: "address" });
    expect((await checkThrottle(db, { email: "fresh@example.com", address: "203.0.113.8" }, now + 1)).limited).toBe(false);
  });

  it("is stored in the state, shared by connections: a restart or a second server sees it", async () => {
    const now = Date.now();
    const s = { email: "erin@example.com", address: "198.51.100.9" };
    for (let i = 0; i < THROTTLE.perAccountAndAddress; i++) await recordFailure(db, s, now);
    const reopened = ctx.connect();
    expect((await checkThrottle(reopened, s)).limited).toBe(true);
    await clearAccountFailures(db, "ERIN@example.com", s.address);
    expect((await checkThrottle(db, s)).limited).toBe(false);
  });

  it("refuses a stranger hammering wrong passwords while the right password from the usual address still works; audits the lock once", async () => {
    const usual = "192.0.2.50";
    const stranger = "203.0.113.66";
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "carol-password", address: usual })).toMatchObject({ ok: true });
    for (let i = 0; i < THROTTLE.perAccountAndAddress; i++) {
      expect(await verifyCredentials(db, { email: "carol@example.com", password: "wrong", address: stranger })).toEqual({ ok: false, reason: "invalid" });
    }
    for (let i = 0; i < 3; i++) {
      // Even the right password is refused from the stranger's address, without being checked.
      expect(await verifyCredentials(db, { email: "carol@example.com", password: i === 2 ? "carol-password" : "wrong", address: stranger })).toMatchObject({ ok: false, reason: "throttled", throttle: { scope: "account_address" } });
    }
    const startedAt = Date.now();
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "carol-password", address: usual })).toMatchObject({ ok: true, user: { email: "carol@example.com" } });
    // Slowed down (5 failures on the account: one step), not locked.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(THROTTLE.slowStepMs - 50);
    // The owner's success does not give the stranger a fresh set of attempts.
    expect(await verifyCredentials(db, { email: "carol@example.com", password: "wrong", address: stranger })).toMatchObject({ ok: false, reason: "throttled" });
    const audited = await listAudit(db, { action: "signin.throttled" });
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actor: "system", target: "carol@example.com", details: { address: stranger, failures: 5, windowMinutes: 15 } });
    await clearAccountFailures(db, "carol@example.com", stranger);
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
