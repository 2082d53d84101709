/**
 * A person's own defaults for the report pages: the time zone a page starts in and the
 * apps it starts with (issue 29). Anyone signed in may read and save their own; the apps
 * must be ones they may see, the zone an IANA name. Every save is audited.
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { userPreferences } from "@/db/schema";
import { listApps } from "@/lib/apps/registry";
import { isValidTimeZone } from "@/lib/analytics/tz";
import { HttpError } from "@/lib/http/errors";
import { auditSync } from "./audit";
import { canSeeApp } from "./authorize";
import type { Caller } from "./caller";

export interface UserPreferences {
  /** IANA zone; null: the browser's. */
  timeZone: string | null;
  /** Platform app ids; empty: every app the person may see. */
  apps: string[];
}

const NONE: UserPreferences = { timeZone: null, apps: [] };

const preferencesInput = z
  .object({
    timeZone: z.string().max(64).nullable().optional(),
    apps: z.array(z.string().min(1).max(63)).max(100).optional(),
  })
  .strict();

export function getPreferences(db: Db, userPk: number): UserPreferences {
  const row = db.select().from(userPreferences).where(eq(userPreferences.userPk, userPk)).get();
  return row ? { timeZone: row.timeZone, apps: row.apps } : NONE;
}

/** The caller's defaults as a page may apply them: apps since revoked or removed left out. */
export function callerPreferences(db: Db, caller: Caller): UserPreferences {
  const saved = getPreferences(db, caller.userId);
  if (saved.apps.length === 0) return saved;
  const visible = new Set(listApps(db).filter((a) => canSeeApp(caller, a.pk)).map((a) => a.appId));
  return { ...saved, apps: saved.apps.filter((a) => visible.has(a)) };
}

/** Saves any of {timeZone, apps} for the caller; 400 naming the field for a bad one. */
export function savePreferences(db: Db, caller: Caller, body: unknown): UserPreferences {
  const parsed = preferencesInput.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "body");
    throw new HttpError(400, "invalid_parameter", `${field}: ${issue?.message ?? "invalid"}`, { parameter: field });
  }
  const input = parsed.data;
  if (input.timeZone !== undefined && input.timeZone !== null && !isValidTimeZone(input.timeZone)) {
    throw new HttpError(400, "invalid_parameter", `timeZone: "${input.timeZone}" is not an IANA time zone (e.g. UTC, Europe/Berlin, Asia/Kolkata)`, { parameter: "timeZone" });
  }
  if (input.apps !== undefined) {
    const visible = new Set(listApps(db).filter((a) => canSeeApp(caller, a.pk)).map((a) => a.appId));
    const unknown = input.apps.find((a) => !visible.has(a));
    // Same answer for an app that does not exist and one the caller may not see.
    if (unknown !== undefined) throw new HttpError(400, "invalid_parameter", `apps: "${unknown}" is not an app you can see`, { parameter: "apps" });
  }
  const current = getPreferences(db, caller.userId);
  const next: UserPreferences = {
    timeZone: input.timeZone !== undefined ? input.timeZone : current.timeZone,
    apps: input.apps !== undefined ? [...new Set(input.apps)] : current.apps,
  };
  db.insert(userPreferences)
    .values({ userPk: caller.userId, timeZone: next.timeZone, apps: next.apps, updatedMs: Date.now() })
    .onConflictDoUpdate({ target: userPreferences.userPk, set: { timeZone: next.timeZone, apps: next.apps, updatedMs: Date.now() } })
    .run();
  auditSync(db, caller, "preferences.update", caller.email, { timeZone: next.timeZone, apps: next.apps });
  return next;
}
