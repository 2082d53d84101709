/**
 * The alert routes' handlers, shared by `/api/v1/alerts?id=N` (the contract route) and
 * `/api/v1/alerts/{id}`: parse, authorize, call lib/alerts, answer JSON.
 */
import { z } from "zod";
import { db } from "@/db";
import { createRule, deleteRule, firingCount, getRule, listHistory, listRules, updateRule } from "@/lib/alerts";
import { authorize } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { badRequest } from "@/lib/http/errors";

const idSchema = z.coerce.number({ error: "must be a rule id" }).int("must be a rule id").min(1, "must be a rule id").max(Number.MAX_SAFE_INTEGER);
const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/** The rule id of `?id=` or of the path; 400 naming `id` when it is missing or not an id. */
export function ruleId(raw: string | null | undefined): number {
  if (raw === null || raw === undefined || raw === "") throw badRequest("id: the rule id is required (?id=N)", { parameter: "id" });
  const parsed = idSchema.safeParse(raw);
  if (!parsed.success) throw badRequest(`id: "${raw.slice(0, 40)}" is not a rule id`, { parameter: "id" });
  return parsed.data;
}

/** Every visible rule with its state, the firing count and the latest transitions; or one rule with its history. */
export function getAlerts(request: Request, id: number | null): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const { limit } = listQuery.parse({ limit: new URL(request.url).searchParams.get("limit") ?? undefined });
    const warehouse = db();
    if (id !== null) return Response.json({ data: getRule(warehouse, caller, id), history: listHistory(warehouse, caller, { ruleId: id, limit }) });
    return Response.json({ data: listRules(warehouse, caller), firing: firingCount(warehouse, caller), history: listHistory(warehouse, caller, { limit }) });
  });
}

export function postAlert(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const { rule, secret } = await createRule(db(), caller, await readJsonObject(request));
    return Response.json({ data: rule, ...(secret ? { secret } : {}) }, { status: 201 });
  });
}

export function patchAlert(request: Request, id: number): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const { rule, secret } = await updateRule(db(), caller, id, await readJsonObject(request));
    return Response.json({ data: rule, ...(secret ? { secret } : {}) });
  });
}

export function deleteAlert(request: Request, id: number): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    return Response.json({ data: deleteRule(db(), caller, id) });
  });
}

/** Runs `fn` with the rule id parsed inside `respond`, so a bad id is a 400 like any other error. */
export function withRuleId(raw: string | null, fn: (id: number) => Promise<Response>): Promise<Response> {
  return respond(() => fn(ruleId(raw)));
}
