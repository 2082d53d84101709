import { z } from "zod";
import { db } from "@/db";
import { runAlertsTick } from "@/lib/alerts";
import { upcomingEvaluations } from "@/lib/alerts/evaluate";
import { getRuleRecord } from "@/lib/alerts/rules";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";

export const dynamic = "force-dynamic";

const bodySchema = z.object({ id: z.number().int().min(1).optional() }).strict();

/**
 * POST /api/v1/alerts/evaluate {id?} (admin): runs the schedule's round now — every rule
 * (or one) whose latest closed window is not evaluated yet, then the due notifications.
 * A window already evaluated is not evaluated again (docs/api.md); `upcoming` says, per
 * enabled rule, the last window evaluated and when the next one is due.
 */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const { id } = bodySchema.parse(await readJsonObject(request, { emptyIsObject: true }));
    const warehouse = db();
    if (id !== undefined) getRuleRecord(warehouse, caller, id); // 404 for an unknown rule
    const result = await runAlertsTick(warehouse, { ruleId: id });
    await audit(warehouse, caller, "alert.evaluate", id === undefined ? "alerts" : `alert ${id}`, { evaluated: result.evaluated.length, delivered: result.delivered.length });
    const upcoming = upcomingEvaluations(warehouse).filter((u) => id === undefined || u.ruleId === id);
    return Response.json({ data: { ...result, upcoming } });
  });
}
