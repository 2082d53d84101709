import { and, count, eq, gt, lt, min } from "drizzle-orm";
import type { Db } from "@/db/client";
import { signinFailures } from "@/db/schema";

/**
 * Sign-in throttle, stored in the warehouse (survives restarts, shared by processes).
 * A failure counts against the account (normalised email) and the client address;
 * once a key has reached its limit inside the window, sign-in is refused for that key
 * WITHOUT checking the password, until its oldest failure leaves the window.
 * A success clears the account's failures (not the address's: one valid account must
 * not reset the counter of an address spraying others).
 */
export const THROTTLE = {
  windowMs: 15 * 60_000,
  perAccount: 5,
  perAddress: 20,
} as const;

export interface ThrottleSubject {
  email: string;
  address: string;
}

export type ThrottleState =
  | { limited: false }
  | { limited: true; scope: "account" | "address"; retryAfterSeconds: number };

const accountKey = (email: string) => `account:${email.trim().toLowerCase()}`;
const addressKey = (address: string) => `address:${address}`;

function stateOf(db: Db, key: string, limit: number, now: number): { limited: boolean; retryAfterSeconds: number } {
  const since = now - THROTTLE.windowMs;
  const r = db
    .select({ n: count(), oldest: min(signinFailures.atMs) })
    .from(signinFailures)
    .where(and(eq(signinFailures.key, key), gt(signinFailures.atMs, since)))
    .get();
  const n = r?.n ?? 0;
  if (n < limit || r?.oldest == null) return { limited: false, retryAfterSeconds: 0 };
  // With more failures than the limit (concurrent attempts), the oldest leaving the
  // window may still leave `limit` behind: a conservative, simple answer is enough.
  return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((r.oldest + THROTTLE.windowMs - now) / 1000)) };
}

export function checkThrottle(db: Db, subject: ThrottleSubject, now = Date.now()): ThrottleState {
  const account = stateOf(db, accountKey(subject.email), THROTTLE.perAccount, now);
  const address = stateOf(db, addressKey(subject.address), THROTTLE.perAddress, now);
  if (!account.limited && !address.limited) return { limited: false };
  if (account.limited && (!address.limited || account.retryAfterSeconds >= address.retryAfterSeconds)) {
    return { limited: true, scope: "account", retryAfterSeconds: account.retryAfterSeconds };
  }
  return { limited: true, scope: "address", retryAfterSeconds: address.retryAfterSeconds };
}

export function recordFailure(db: Db, subject: ThrottleSubject, now = Date.now()): void {
  db.transaction((tx) => {
    tx.insert(signinFailures)
      .values([
        { key: accountKey(subject.email), atMs: now },
        { key: addressKey(subject.address), atMs: now },
      ])
      .run();
    tx.delete(signinFailures).where(lt(signinFailures.atMs, now - THROTTLE.windowMs)).run();
  });
}

export function clearAccountFailures(db: Db, email: string): void {
  db.delete(signinFailures).where(eq(signinFailures.key, accountKey(email))).run();
}

export function throttleMessage(state: Extract<ThrottleState, { limited: true }>): string {
  const minutes = Math.ceil(state.retryAfterSeconds / 60);
  const wait = minutes <= 1 ? "a minute" : `${minutes} minutes`;
  return state.scope === "account"
    ? `Too many failed sign-ins for this account. Try again in ${wait}.`
    : `Too many failed sign-ins from your network address. Try again in ${wait}.`;
}
