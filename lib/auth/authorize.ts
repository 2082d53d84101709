/**
 * THE authorization point. Every page, route handler and server action asks it who
 * the caller is and which apps they may see: `authorize(request)` in route handlers,
 * `currentCaller()` / `actionCaller()` (lib/auth/session.ts) in pages and actions.
 *
 * Credentials, in this order: `Authorization: Bearer cb_…` (an API token), else the
 * next-auth session cookie (a JWT). Either way the user is re-read from the warehouse
 * on every call: a disabled or removed user loses access at once, role and grant
 * changes apply to the next request. A write by cookie must also come from this
 * server's own pages (lib/auth/same-origin.ts). See docs/decisions/0005-sessions-and-throttle.md.
 */
import { eq, inArray, SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { apps, type AppRow } from "@/db/schema";
import { forbidden, notFound, unauthorized } from "@/lib/http/errors";
import { ensureFirstAdmin } from "./first-admin";
import { isSessionEnded } from "./ended-sessions";
import { cookieWriteRefusal } from "./same-origin";
import { readSessionClaims, type SessionClaims } from "./session-token";
import { env } from "@/lib/config/env";
import { takeTokenRequest } from "./token-rate-limit";
import { resolveApiToken } from "./tokens";
import { getUserByPk, grantedAppPks } from "./users";
import type { Caller } from "./caller";

export type { Caller } from "./caller";

const READ_METHODS = new Set(["GET", "HEAD"]);
const READ_ONLY_MESSAGE = "This API token is read-only: it reads reports, CSV and statements, and changes nothing.";

export async function authorize(request: Request): Promise<Caller> {
  return authorizeRequest(warehouse(), request);
}

/** `authorize` on a given warehouse (tests, scripts). */
export async function authorizeRequest(db: Db, request: Request): Promise<Caller> {
  await ensureFirstAdmin(db);
  const header = request.headers.get("authorization");
  if (header !== null && /^bearer\s/i.test(header)) {
    // An explicit credential that fails is a failure: never fall back to the cookie.
    const resolved = await resolveApiToken(db, header.slice(7).trim());
    const caller = resolved ? await callerForUser(db, resolved.userId) : null;
    if (!resolved || !caller) throw unauthorized("The API token is not valid (unknown, revoked, expired, or its user is disabled).");
    takeTokenRequest(resolved.tokenId, env().API_TOKEN_RATE_LIMIT_PER_MINUTE);
    if (resolved.scope === "full") return caller;
    // A read token reads what its user may read (reports, CSV, statements) and writes nothing.
    if (!READ_METHODS.has(request.method)) throw forbidden(READ_ONLY_MESSAGE);
    return { ...caller, readOnly: true };
  }
  const claims = await readSessionClaims(request.headers);
  const caller = claims ? await callerForSession(db, claims) : null;
  if (!caller) throw unauthorized();
  // A cookie rides along on any request the browser makes: a write must come from our own pages.
  const refusal = cookieWriteRefusal(request, { jsonBody: true });
  if (refusal) throw refusal;
  return caller;
}

/** The caller of a session cookie's claims: null when the session was ended by signing out. */
export async function callerForSession(db: Db, claims: SessionClaims): Promise<Caller | null> {
  if (await isSessionEnded(db, claims.sessionId)) return null;
  return await callerForUser(db, claims.userId, { sessionEpoch: claims.sessionEpoch });
}

/**
 * The caller for a user id, as the warehouse has it now; null when the user is gone,
 * disabled, or (with `sessionEpoch`) the session predates a password change or disable.
 */
export async function callerForUser(db: Db, userId: number, options: { sessionEpoch?: number } = {}): Promise<Caller | null> {
  const user = await getUserByPk(db, userId);
  if (!user || user.disabled) return null;
  if (options.sessionEpoch !== undefined && options.sessionEpoch !== user.sessionEpoch) return null;
  return {
    userId: user.pk,
    email: user.email,
    role: user.role,
    appPks: user.role === "admin" ? "all" : await grantedAppPks(db, user.pk),
  };
}

export function isAdmin(caller: Caller): boolean {
  return caller.role === "admin" && !caller.readOnly;
}

/** Admin-only operations (apps, webhooks, users, tokens, sync now): 403 otherwise, and always for a read-only token. */
export function requireAdmin(caller: Caller): void {
  if (caller.readOnly) throw forbidden(READ_ONLY_MESSAGE);
  if (caller.role !== "admin") throw forbidden();
}

export function canSeeApp(caller: Caller, appPk: number): boolean {
  return caller.appPks === "all" || caller.appPks.includes(appPk);
}

/** 404, exactly as for an app that does not exist, when the caller may not see it. */
export function assertAppVisible(caller: Caller, appPk: number): void {
  if (!canSeeApp(caller, appPk)) throw notFound();
}

export function appScope(caller: Caller): "all" | number[] {
  return caller.appPks === "all" ? "all" : [...caller.appPks];
}

/** Every app pk the caller may see, as a list (admins: every registered app). */
export function visibleAppPks(db: Db, caller: Caller): number[] {
  if (caller.appPks !== "all") return [...caller.appPks];
  return db.select({ pk: apps.pk }).from(apps).all().map((r) => r.pk);
}

/**
 * The tenant restriction to put INSIDE a query's WHERE: `column IN (granted)` for a
 * viewer (always false with no grant), always true for an admin.
 *   db.select().from(calls).where(and(appScopeCondition(caller, calls.appPk), ...filters))
 */
export function appScopeCondition(caller: Caller, column: SQLiteColumn | SQL): SQL {
  if (caller.appPks === "all") return sql`1 = 1`;
  if (caller.appPks.length === 0) return sql`0 = 1`;
  return column instanceof SQL ? inArray(column, caller.appPks) : inArray(column, caller.appPks);
}

/** An app by its platform id, or 404 when it does not exist or the caller may not see it. */
export function resolveVisibleApp(db: Db, caller: Caller, appId: string): AppRow {
  const app = db.select().from(apps).where(eq(apps.appId, appId)).get();
  if (!app || !canSeeApp(caller, app.pk)) throw notFound(`app "${appId}" not found`);
  return app;
}

/** The pks of `?app=` values, each visible to the caller, or 404 for the first that is not. */
export function resolveVisibleAppPks(db: Db, caller: Caller, appIds: readonly string[]): number[] {
  return [...new Set(appIds)].map((id) => resolveVisibleApp(db, caller, id).pk);
}
