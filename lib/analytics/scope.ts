import { asc, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { notFound } from "@/lib/http/errors";
import type { Filters } from "./filters";

/**
 * Whose apps a report may read. Tenant apps live in the SQLite warehouse whichever
 * engine answers the reports, so every engine resolves a request's apps here: the
 * requested ones (each must exist and be visible) or every app the caller may see.
 */

/** Whose apps a query may read: `Caller` satisfies it. */
export interface Scope {
  appPks: "all" | readonly number[];
}

export interface AppRef {
  pk: number;
  appId: string;
  name: string;
}

/** Apps the caller may see, by pk (the SQLite file, read synchronously: the in-memory engine). */
export function visibleApps(db: Db, scope: Scope): AppRef[] {
  return visibleAmong(db.all<AppRef>(sql`SELECT pk, app_id AS appId, name FROM apps ORDER BY app_id`), scope);
}

/**
 * Every app, by app id, from either state store (SQLite or Postgres: decision 0042): what
 * the ClickHouse engine reads once per answer before it resolves the request's apps.
 */
export async function listAppRefs(db: Db): Promise<AppRef[]> {
  const { apps } = tablesOf(db);
  return db.select({ pk: apps.pk, appId: apps.appId, name: apps.name }).from(apps).orderBy(asc(apps.appId));
}

/** Apps the caller may see, from either state store (pages, handlers; `visibleApps` is the SQLite file's, synchronously). */
export async function readVisibleApps(db: Db, scope: Scope): Promise<AppRef[]> {
  return visibleAmong(await listAppRefs(db), scope);
}

/** `resolveApps` from either state store. */
export async function readResolvedApps(db: Db, f: Pick<Filters, "apps">, scope: Scope): Promise<number[] | "all"> {
  return resolveAmong(f.apps.length === 0 ? [] : await readVisibleApps(db, scope), f, scope);
}

/** Of every app (`listAppRefs`), those the caller may see. */
export function visibleAmong(every: readonly AppRef[], scope: Scope): AppRef[] {
  const allowed = scope.appPks;
  return allowed === "all" ? [...every] : every.filter((r) => allowed.includes(r.pk));
}

/**
 * The app pks a query is restricted to: the requested apps (each must exist and be
 * visible, else 404 as if it did not exist), or every app the caller may see.
 */
export function resolveApps(db: Db, f: Pick<Filters, "apps">, scope: Scope): number[] | "all" {
  return resolveAmong(f.apps.length === 0 ? [] : visibleApps(db, scope), f, scope);
}

/** `resolveApps` over the apps the caller may see, already read. */
export function resolveAmong(visibleList: readonly AppRef[], f: Pick<Filters, "apps">, scope: Scope): number[] | "all" {
  if (f.apps.length === 0) return scope.appPks === "all" ? "all" : [...scope.appPks];
  const visible = new Map(visibleList.map((a) => [a.appId, a.pk]));
  return f.apps.map((appId) => {
    const pk = visible.get(appId);
    if (pk === undefined) throw notFound(`app "${appId}" not found`);
    return pk;
  });
}
