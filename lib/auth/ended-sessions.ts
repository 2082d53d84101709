import { eq, lt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { SESSION_MAX_AGE_SECONDS } from "./next-auth-config";

/**
 * Signing out ends this sign-in for good, whatever renewed cookie a late request brings
 * back, on every server reading the same state (DATABASE_URL): each request asks.
 */
export async function endSession(db: Db, sessionId: string, nowMs = Date.now()): Promise<void> {
  const { endedSessions } = tablesOf(db);
  await db.insert(endedSessions).values({ sid: sessionId, endedMs: nowMs }).onConflictDoNothing();
  // A session older than its lifetime is dead anyway: keep the list short. (Apart from
  // the insert: the end holds even if this tidying fails.)
  await db.delete(endedSessions).where(lt(endedSessions.endedMs, nowMs - SESSION_MAX_AGE_SECONDS * 1000 * 2));
}

export async function isSessionEnded(db: Db, sessionId: string): Promise<boolean> {
  const { endedSessions } = tablesOf(db);
  const [row] = await db.select({ sid: endedSessions.sid }).from(endedSessions).where(eq(endedSessions.sid, sessionId));
  return row !== undefined;
}
