/**
 * A person's own defaults for the report pages: the time zone a page starts in and the
 * apps it starts with (issue 29). Anyone signed in may read and save their own; the apps
 * must be ones they may see, the zone an IANA name. Every save is audited.
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { listApps } from "@/lib/apps/registry";
import { isValidTimeZone } from "@/lib/time/tz";
import { HttpError } from "@/lib/http/errors";
import { audit } from "./audit";
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

export async function getPreferences(db: Db, userPk: number): Promise<UserPreferences> {
  const { userPreferences } = tablesOf(db);
  const [row] = await db.select().from(userPreferences).where(eq(userPreferences.userPk, userPk));
  return row ? { timeZone: row.timeZone, apps: row.apps } : NONE;
}

/** The platform app ids the caller may see. */
async function visibleAppIds(db: Db, caller: Caller): Promise<Set<string>> {
  return new Set((await listApps(db)).filter((a) => canSeeApp(caller, a.pk)).map((a) => a.appId));
}

/** The caller's defaults as a page may apply them: apps since revoked or removed left out. */
export async function callerPreferences(db: Db, caller: Caller): Promise<UserPreferences> {
  const saved = await getPreferences(db, caller.userId);
  if (saved.apps.length === 0) return saved;
  const visible = await visibleAppIds(db, caller);
  return { ...saved, apps: saved.apps.filter((a) => visible.has(a)) };
}

/** Saves any of {timeZone, apps} for the caller; 400 naming the field for a bad one. */
export async function savePreferences(db: Db, caller: Caller, body: unknown): Promise<UserPreferences> {
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
    const visible = await visibleAppIds(db, caller);
    const unknown = input.apps.find((a) => !visible.has(a));
    // Same answer for an app that does not exist and one the caller may not see.
    if (unknown !== undefined) throw new HttpError(400, "invalid_parameter", `apps: "${unknown}" is not an app you can see`, { parameter: "apps" });
  }
  const current = await getPreferences(db, caller.userId);
  const next: UserPreferences = {
    timeZone: input.timeZone !== undefined ? input.timeZone : current.timeZone,
    apps: input.apps !== undefined ? [...new Set(input.apps)] : current.apps,
  };
  const { userPreferences } = tablesOf(db);
  await db
    .insert(userPreferences)
    .values({ userPk: caller.userId, timeZone: next.timeZone, apps: next.apps, updatedMs: Date.now() })
    .onConflictDoUpdate({ target: userPreferences.userPk, set: { timeZone: next.timeZone, apps: next.apps, updatedMs: Date.now() } });
  await audit(db, caller, "preferences.update", caller.email, { timeZone: next.timeZone, apps: next.apps });
  return next;
}
