import { getToken, type JWT } from "next-auth/jwt";
import { env } from "@/lib/config/env";

/**
 * next-auth's session cookie, as it names it: `__Secure-` when the site is served over
 * HTTPS (directly or per X-Forwarded-Proto), plain otherwise. The cookie name is also
 * the salt of the JWT's key.
 */
export const SESSION_COOKIE = "authjs.session-token";
export const SECURE_SESSION_COOKIE = `__Secure-${SESSION_COOKIE}`;

/** What Callboard puts in the session JWT besides `sub` (the user id) and `email`. */
export interface SessionClaims {
  userId: number;
  sessionEpoch: number;
  /** This sign-in's id, the same across renewals (ended by signing out). */
  sessionId: string;
}

export function claimsOf(token: JWT | null): SessionClaims | null {
  if (!token) return null;
  const userId = Number(token.sub);
  const epoch = token.epoch;
  const sid = token.sid;
  if (!Number.isSafeInteger(userId) || userId <= 0 || typeof epoch !== "number" || typeof sid !== "string" || sid === "") return null;
  return { userId, sessionEpoch: epoch, sessionId: sid };
}

/**
 * Decodes the session cookie carried by this request (same secret, salt and library
 * as next-auth itself). Null when there is none, or it is forged or expired.
 */
export async function readSessionClaims(headers: Pick<Headers, "get">): Promise<SessionClaims | null> {
  const cookie = headers.get("cookie");
  if (!cookie || !cookie.includes(SESSION_COOKIE)) return null;
  const secret = env().AUTH_SECRET;
  // getToken would fall back to an Authorization: Bearer header; only cookies count here.
  const req = { headers: new Headers({ cookie }) };
  for (const secureCookie of cookie.includes(SECURE_SESSION_COOKIE) ? [true, false] : [false]) {
    const token = await getToken({ req, secret, secureCookie, logger: { error: () => {}, warn: () => {}, debug: () => {} } as never });
    const claims = claimsOf(token);
    if (claims) return claims;
  }
  return null;
}
