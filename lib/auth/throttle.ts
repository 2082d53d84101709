import { and, count, eq, gt, inArray, lt, min } from "drizzle-orm";
import type { Db } from "@/db/client";
import { stateTransaction, tablesOf } from "@/db/state";

/**
 * Sign-in throttle, stored in the warehouse (survives restarts, shared by processes).
 * Each failure is counted three ways (docs/decisions/0005-sessions-tokens-throttle.md):
 * - the account AND the client address together: 5 in 15 minutes refuse that address's
 *   further attempts on that account WITHOUT checking the password. A stranger who
 *   knows an admin's e-mail locks only themself out, never the admin's own address;
 * - the client address alone: 20 in 15 minutes (across accounts) refuse that address;
 * - the account alone (from any address): never a lock, a slow-down: past 5 failures each
 *   attempt on the account waits a little longer (1 s more per failure, at most 3 s)
 *   before the password is checked, so guessing from many addresses is slow while the
 *   right password still works.
 * A success clears the account's failures and those of the succeeding address on it (not
 * the address's own count: one valid account must not reset the counter of an address
 * spraying others; nor other addresses' counts on the account).
 */
export const THROTTLE = {
  windowMs: 15 * 60_000,
  perAccountAndAddress: 5,
  perAddress: 20,
  /** Account-wide failures from which attempts are slowed down. */
  slowAfterAccountFailures: 5,
  slowStepMs: 1_000,
  slowMaxMs: 3_000,
} as const;

export interface ThrottleSubject {
  email: string;
  address: string;
}

export type ThrottleState =
  | { limited: false; delayMs: number }
  | { limited: true; scope: "account_address" | "address"; retryAfterSeconds: number };

const normalisedEmail = (email: string) => email.trim().toLowerCase();
const accountKey = (email: string) => `account:${normalisedEmail(email)}`;
const addressKey = (address: string) => `address:${address}`;
// The address last: an e-mail cannot hold a newline, so no pair of values collides.
const pairKey = (email: string, address: string) => `account_address:${normalisedEmail(email)}\n${address}`;

async function failuresOf(db: Db, key: string, now: number): Promise<{ n: number; oldest: number | null }> {
  const { signinFailures } = tablesOf(db);
  const [r] = await db
    .select({ n: count(), oldest: min(signinFailures.atMs) })
    .from(signinFailures)
    .where(and(eq(signinFailures.key, key), gt(signinFailures.atMs, now - THROTTLE.windowMs)));
  return { n: r?.n ?? 0, oldest: r?.oldest ?? null };
}

async function stateOf(db: Db, key: string, limit: number, now: number): Promise<{ limited: boolean; retryAfterSeconds: number }> {
  const { n, oldest } = await failuresOf(db, key, now);
  if (n < limit || oldest === null) return { limited: false, retryAfterSeconds: 0 };
  // With more failures than the limit (concurrent attempts), the oldest leaving the
  // window may still leave `limit` behind: a conservative, simple answer is enough.
  return { limited: true, retryAfterSeconds: Math.max(1, Math.ceil((oldest + THROTTLE.windowMs - now) / 1000)) };
}

export async function checkThrottle(db: Db, subject: ThrottleSubject, now = Date.now()): Promise<ThrottleState> {
  const pair = await stateOf(db, pairKey(subject.email, subject.address), THROTTLE.perAccountAndAddress, now);
  const address = await stateOf(db, addressKey(subject.address), THROTTLE.perAddress, now);
  if (pair.limited && (!address.limited || pair.retryAfterSeconds >= address.retryAfterSeconds)) {
    return { limited: true, scope: "account_address", retryAfterSeconds: pair.retryAfterSeconds };
  }
  if (address.limited) return { limited: true, scope: "address", retryAfterSeconds: address.retryAfterSeconds };
  const account = (await failuresOf(db, accountKey(subject.email), now)).n;
  const over = account - THROTTLE.slowAfterAccountFailures + 1;
  return { limited: false, delayMs: over > 0 ? Math.min(THROTTLE.slowMaxMs, over * THROTTLE.slowStepMs) : 0 };
}

/**
 * Counts a failure; true when it is the one that makes the account-and-address pair
 * reach its limit (the caller audits that moment once, not every refused attempt after).
 * (On Postgres, two servers counting the same pair's failures at the same instant may
 * both miss or both see the limit-th: the refusal itself counts every failure either way.)
 */
export async function recordFailure(db: Db, subject: ThrottleSubject, now = Date.now()): Promise<boolean> {
  return stateTransaction(db, async (tx) => {
    const { signinFailures } = tablesOf(tx);
    await tx
      .insert(signinFailures)
      .values([
        { key: accountKey(subject.email), atMs: now },
        { key: addressKey(subject.address), atMs: now },
        { key: pairKey(subject.email, subject.address), atMs: now },
      ]);
    await tx.delete(signinFailures).where(lt(signinFailures.atMs, now - THROTTLE.windowMs));
    const [r] = await tx
      .select({ n: count() })
      .from(signinFailures)
      .where(and(eq(signinFailures.key, pairKey(subject.email, subject.address)), gt(signinFailures.atMs, now - THROTTLE.windowMs)));
    return (r?.n ?? 0) === THROTTLE.perAccountAndAddress;
  });
}

/**
 * After a success from `address`: the account's own failures and those of this address on
 * it. Other addresses' counts on the account stay: the owner signing in must not give a
 * stranger who is refused a fresh set of attempts.
 */
export async function clearAccountFailures(db: Db, email: string, address: string): Promise<void> {
  const { signinFailures } = tablesOf(db);
  await db.delete(signinFailures).where(inArray(signinFailures.key, [accountKey(email), pairKey(email, address)]));
}

export function throttleMessage(state: Extract<ThrottleState, { limited: true }>): string {
  const minutes = Math.ceil(state.retryAfterSeconds / 60);
  const wait = minutes <= 1 ? "a minute" : `${minutes} minutes`;
  return state.scope === "account_address"
    ? `Too many failed sign-ins for this account from your network address. Try again in ${wait}.`
    : `Too many failed sign-ins from your network address. Try again in ${wait}.`;
}
