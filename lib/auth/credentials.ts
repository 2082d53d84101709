import type { Db } from "@/db/client";
import { setTimeout as sleep } from "node:timers/promises";
import { logger } from "@/lib/log/logger";
import { audit } from "./audit";
import { MAX_PASSWORD_LENGTH, burnVerification, verifyPassword } from "./passwords";
import { checkThrottle, clearAccountFailures, recordFailure, THROTTLE, type ThrottleState } from "./throttle";
import { getUserByEmail, normalizeEmail, type Role } from "./users";

export interface SignedInUser {
  id: number;
  email: string;
  role: Role;
  sessionEpoch: number;
}

export type SignInOutcome =
  | { ok: true; user: SignedInUser }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; throttle: Extract<ThrottleState, { limited: true }> };

/**
 * Checks an email and password, under the throttle. Unknown email, wrong password and
 * disabled account all answer `invalid` after the same work, so the answer does not
 * tell which accounts exist.
 */
export async function verifyCredentials(
  db: Db,
  input: { email: unknown; password: unknown; address: string },
): Promise<SignInOutcome> {
  const email = typeof input.email === "string" ? normalizeEmail(input.email).slice(0, 254) : "";
  const password = typeof input.password === "string" ? input.password : "";
  const subject = { email, address: input.address };

  const throttle = await checkThrottle(db, subject);
  if (throttle.limited) {
    logger.warn({ email, address: input.address, scope: throttle.scope }, "sign-in throttled");
    return { ok: false, reason: "throttled", throttle };
  }
  // Many failures on this account from anywhere: slower, never locked (lib/auth/throttle.ts).
  if (throttle.delayMs > 0) await sleep(throttle.delayMs);

  const user = email ? await getUserByEmail(db, email) : undefined;
  let valid = false;
  if (!user || password.length === 0 || password.length > MAX_PASSWORD_LENGTH) {
    await burnVerification(password.slice(0, MAX_PASSWORD_LENGTH));
  } else {
    valid = (await verifyPassword(user.passwordHash, password)) && !user.disabled;
  }

  if (!valid || !user) {
    if (await recordFailure(db, subject)) {
      // Once per pair reaching its limit, not per refused attempt after it: an attacker cannot flood the log.
      await audit(db, { email: "system" }, "signin.throttled", email, { address: input.address, failures: THROTTLE.perAccountAndAddress, windowMinutes: THROTTLE.windowMs / 60_000 });
    }
    logger.info({ email, address: input.address }, "sign-in failed");
    return { ok: false, reason: "invalid" };
  }
  await clearAccountFailures(db, email, input.address);
  logger.info({ email, userId: user.pk }, "signed in");
  return { ok: true, user: { id: user.pk, email: user.email, role: user.role, sessionEpoch: user.sessionEpoch } };
}
