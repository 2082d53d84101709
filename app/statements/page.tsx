import { dehydrate, HydrationBoundary, QueryClient } from "@tanstack/react-query";
import type { Metadata } from "next";
import { db } from "@/db";
import { listApps } from "@/lib/apps/registry";
import { currentCaller } from "@/lib/auth/session";
import { lastWholeMonth } from "@/lib/billing/month";
import { statementsJson } from "@/lib/billing/statements";
import { loadStatementParams, statementsKey, statementsQuery } from "./params";
import { StatementsView } from "./statements-view";
import "./statements.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Usage statements" };

export default async function StatementsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const caller = await currentCaller();
  const values = loadStatementParams(await searchParams);
  const warehouse = db();
  const apps = (await listApps(warehouse))
    .filter((a) => caller.appPks === "all" || caller.appPks.includes(a.pk))
    .map(({ appId, name }) => ({ appId, name }));
  // The last whole month in the chosen zone, unless the URL names one.
  const defaultMonth = lastWholeMonth(values.tz);
  const query = statementsQuery(values, defaultMonth);
  const client = new QueryClient({ defaultOptions: { queries: { staleTime: 30_000 } } });
  try {
    const month = values.month ?? defaultMonth;
    client.setQueryData(statementsKey(query), await statementsJson(warehouse, { month, tz: values.tz, apps: values.app, detail: values.detail }, caller));
  } catch {
    // Left out: the client fetches the route and shows its error message (an app the viewer may not see: 404).
  }
  return (
    <main id="main" tabIndex={-1} className="container dash statements-page">
      <h1 className="no-print">Usage statements</h1>
      <HydrationBoundary state={dehydrate(client)}>
        <StatementsView apps={apps} isAdmin={caller.role === "admin"} defaultMonth={defaultMonth} />
      </HydrationBoundary>
    </main>
  );
}
