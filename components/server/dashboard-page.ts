/**
 * What every filtered dashboard page does on the server: who is asking, the filters
 * of the URL (the same nuqs parsers the client uses), the apps the caller may pick.
 */
import { db } from "@/db";
import { readVisibleApps } from "@/lib/analytics";
import type { Caller } from "@/lib/auth/authorize";
import { currentCaller } from "@/lib/auth/session";
import { loadFilters, type AllValues } from "@/lib/ui/filter-params";
import type { AppOption } from "../filter-bar";

export type PageSearchParams = Promise<Record<string, string | string[] | undefined>>;

export async function dashboardPage(searchParams: PageSearchParams): Promise<{ caller: Caller; values: AllValues; apps: AppOption[] }> {
  const caller = await currentCaller();
  const values = loadFilters(await searchParams);
  const apps = (await readVisibleApps(db(), caller)).map(({ appId, name }) => ({ appId, name }));
  return { caller, values, apps };
}
