import { eq, lt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { endedSessions } from "@/db/schema";
import { SESSION_MAX_AGE_SECONDS } from "./next-auth-config";

/** Signing out ends this sign-in for good, whatever renewed cookie a late request brings back. */
export function endSession(db: Db, sessionId: string, nowMs = Date.now()): void {
  db.transaction((tx) => {
    tx.insert(endedSessions).values({ sid: sessionId, endedMs: nowMs }).onConflictDoNothing().run();
    // A session older than its lifetime is dead anyway: keep the list short.
    tx.delete(endedSessions)
      .where(lt(endedSessions.endedMs, nowMs - SESSION_MAX_AGE_SECONDS * 1000 * 2))
      .run();
  });
}

export function isSessionEnded(db: Db, sessionId: string): boolean {
  return db.select({ sid: endedSessions.sid }).from(endedSessions).where(eq(endedSessions.sid, sessionId)).get() !== undefined;
}
