import type { Metadata } from "next";
import { db } from "@/db";
import "@/app/_ops/ops.css";
import "./alerts.css";
import { nowMs } from "@/app/_ops/format";
import { appOptions } from "@/lib/ops/scope";
import { firingCount, listHistory, listRules } from "@/lib/alerts";
import { currentCaller } from "@/lib/auth/session";
import { AlertsView } from "./alerts-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alerts" };

/** Alert rules, their state and history: every rule for admins (who also edit them), their apps' rules for viewers. */
export default async function AlertsPage() {
  const caller = await currentCaller();
  const warehouse = db();
  const initial = { data: await listRules(warehouse, caller), firing: await firingCount(warehouse, caller), history: await listHistory(warehouse, caller, { limit: 50 }) };
  return (
    <main id="main" tabIndex={-1} className="container">
      <AlertsView initial={initial} apps={await appOptions(warehouse, caller)} isAdmin={caller.role === "admin"} loadedAtMs={nowMs()} />
    </main>
  );
}
