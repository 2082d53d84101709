import { db } from "@/db";
import { rawFromUrl } from "@/lib/ops/params";
import { scopeAppPks } from "@/lib/ops/scope";
import { syncNowSchema, syncParamsSchema } from "@/lib/ops/sync-params";
import { listApps } from "@/lib/apps/registry";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin, resolveVisibleApp } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { getForwardingStatus } from "@/lib/ingest/forward-backlog";
import { getSyncRuns, getSyncStatus, startManualSync } from "@/lib/sync/runs";

export const dynamic = "force-dynamic";

/** GET /api/v1/sync[?app=…&status=failed&limit=50&before=id]: recent runs, newest first, and each app's sync status. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    // Who asks comes first: an unsigned request is a 401 whatever its parameters.
    const caller = await authorize(request);
    const p = syncParamsSchema.parse(rawFromUrl(new URL(request.url).searchParams));
    const warehouse = db();
    const appPks = await scopeAppPks(warehouse, caller, p.app);
    const data = await getSyncRuns(warehouse, appPks, { limit: p.limit, before: p.before, status: p.status === "any" ? undefined : p.status });
    return Response.json({ data, apps: await getSyncStatus(warehouse, appPks), forwarding: await getForwardingStatus(warehouse, { withError: caller.role === "admin" }) });
  });
}

/**
 * POST /api/v1/sync {app?} (admin): sync now. Answers 200 with each app's result when
 * the syncs end within a few seconds, else 202 while they carry on.
 */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const body = await readJsonObject(request, { emptyIsObject: true });
    const { app } = syncNowSchema.parse(body);
    const warehouse = db();
    const targets = app ? [await resolveVisibleApp(warehouse, caller, app)] : await listApps(warehouse);
    for (const t of targets) await audit(warehouse, caller, "app.sync", t.appId, { trigger: "manual" });
    const data = await startManualSync(warehouse, targets);
    const running = data.some((r) => r.status === "running");
    return Response.json({ data }, { status: running ? 202 : 200 });
  });
}
