import type { Metadata } from "next";
import { db } from "@/db";
import { PageError } from "@/components/page-error";
import { pageErrorMessage } from "@/components/server/page-error-message";
import { appOptions, scopeAppPks } from "@/lib/ops/scope";
import { nowMs } from "@/app/_ops/format";
import { currentCaller } from "@/lib/auth/session";
import { getLiveSessions } from "@/lib/ingest/queries";
import "@/app/_ops/ops.css";
import { LiveView } from "./live-view";
import { liveParamsSchema, visibleLiveSessions } from "@/lib/ops/live-params";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Live now" };

export default async function LivePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const caller = await currentCaller();
  const warehouse = db();
  let params, appPks;
  try {
    params = liveParamsSchema.parse(await searchParams);
    appPks = await scopeAppPks(warehouse, caller, params.app);
  } catch (error) {
    const message = pageErrorMessage(error);
    if (message === null) throw error;
    return <PageError title="Live now" message={message} resetHref="/live" />;
  }
  const asOfMs = nowMs();
  const sessions = visibleLiveSessions(await getLiveSessions(warehouse, appPks, { nowMs: asOfMs, endedWithinMs: params.recent * 60_000 }), params.recent, asOfMs);
  return (
    <main id="main" tabIndex={-1} className="container">
      <LiveView
        params={params}
        apps={await appOptions(warehouse, caller)}
        initial={{ data: sessions, meta: { asOfMs, recentMinutes: params.recent } }}
        isAdmin={caller.role === "admin"}
      />
    </main>
  );
}
