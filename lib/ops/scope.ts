import type { Db } from "@/db/client";
import { listApps } from "@/lib/apps/registry";
import { canSeeApp, resolveVisibleAppPks, visibleAppPks, type Caller } from "@/lib/auth/authorize";

/** The app pks a page or route works on: the `app` params (each visible, else 404) or every visible app. */
export async function scopeAppPks(db: Db, caller: Caller, appIds: readonly string[]): Promise<number[]> {
  return appIds.length ? resolveVisibleAppPks(db, caller, appIds) : visibleAppPks(db, caller);
}

export interface AppOption {
  appId: string;
  name: string;
}

/** Apps for a picker: only the ones the caller may see, never a secret. */
export async function appOptions(db: Db, caller: Caller): Promise<AppOption[]> {
  return (await listApps(db))
    .filter((a) => canSeeApp(caller, a.pk))
    .map((a) => ({ appId: a.appId, name: a.name }));
}
