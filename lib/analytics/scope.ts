import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
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

/** Apps the caller may see, by pk. */
export function visibleApps(db: Db, scope: Scope): AppRef[] {
  const rows = db.all<{ pk: number; appId: string; name: string }>(sql`SELECT pk, app_id AS appId, name FROM apps ORDER BY app_id`);
  const allowed = scope.appPks;
  return allowed === "all" ? rows : rows.filter((r) => allowed.includes(r.pk));
}

/**
 * The app pks a query is restricted to: the requested apps (each must exist and be
 * visible, else 404 as if it did not exist), or every app the caller may see.
 */
export function resolveApps(db: Db, f: Pick<Filters, "apps">, scope: Scope): number[] | "all" {
  if (f.apps.length === 0) return scope.appPks === "all" ? "all" : [...scope.appPks];
  const visible = new Map(visibleApps(db, scope).map((a) => [a.appId, a.pk]));
  return f.apps.map((appId) => {
    const pk = visible.get(appId);
    if (pk === undefined) throw notFound(`app "${appId}" not found`);
    return pk;
  });
}
