import type { Metadata } from "next";
import { db } from "@/db";
import "@/app/_ops/ops.css";
import { PageError } from "@/components/page-error";
import { pageErrorMessage } from "@/components/server/page-error-message";
import { nowMs } from "@/app/_ops/format";
import { appOptions, scopeAppPks } from "@/lib/ops/scope";
import { currentCaller } from "@/lib/auth/session";
import { getForwardingStatus } from "@/lib/ingest/forward-backlog";
import { getSyncRuns, getSyncStatus } from "@/lib/sync/runs";
import { syncParamsSchema } from "@/lib/ops/sync-params";
import { SyncView } from "./sync-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sync" };

export default async function SyncPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const caller = await currentCaller();
  const warehouse = db();
  let p, appPks;
  try {
    p = syncParamsSchema.parse(await searchParams);
    appPks = await scopeAppPks(warehouse, caller, p.app);
  } catch (error) {
    const message = pageErrorMessage(error);
    if (message === null) throw error;
    return <PageError title="Sync" message={message} resetHref="/sync" />;
  }
  const runs = await getSyncRuns(warehouse, appPks, { limit: p.limit, before: p.before, status: p.status === "any" ? undefined : p.status });
  return (
    <main id="main" tabIndex={-1} className="container">
      <SyncView
        params={p}
        apps={await appOptions(warehouse, caller)}
        initial={{ data: runs, apps: await getSyncStatus(warehouse, appPks), forwarding: await getForwardingStatus(warehouse, { withError: caller.role === "admin" }) }}
        isAdmin={caller.role === "admin"}
        loadedAtMs={nowMs()}
      />
    </main>
  );
}
