/**
 * The alert routes' handlers, shared by `/api/v1/alerts?id=N` (the contract route) and
 * `/api/v1/alerts/{id}`: parse, authorize, call lib/alerts, answer JSON.
 */
import { z } from "zod";
import { db } from "@/db";
import { checkAppsVisible, createRule, deleteRule, firingCount, getRule, listHistory, listRules, updateRule } from "@/lib/alerts";
import { authorize } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { badRequest, notFound } from "@/lib/http/errors";

const idSchema = z.coerce.number({ error: "must be a rule id" }).int("must be a rule id").min(1, "must be a rule id").max(Number.MAX_SAFE_INTEGER);
const listQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/**
 * Where a rule id came from: `?id=` (a parameter: a bad value is a 400 naming it) or the
 * path `/api/v1/alerts/{id}` (a path that names no rule is a 404, like any unknown page).
 */
export interface RuleIdArg {
  raw: string | null | undefined;
  from: "query" | "path";
}

/** The rule id; parsed after the caller is authenticated, so that nothing is answered before. */
export function ruleId({ raw, from }: RuleIdArg): number {
  if (raw === null || raw === undefined || raw === "") throw badRequest("id: the rule id is required (?id=N)", { parameter: "id" });
  const parsed = idSchema.safeParse(raw);
  if (!parsed.success) {
    if (from === "path") throw notFound("No such alert rule.");
    throw badRequest(`id: "${raw.slice(0, 40)}" is not a rule id`, { parameter: "id" });
  }
  return parsed.data;
}

/** Every visible rule with its state, the firing count and the latest transitions; or one rule with its history. */
export function getAlerts(request: Request, idArg: RuleIdArg | null): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const id = idArg === null ? null : ruleId(idArg);
    const params = new URL(request.url).searchParams;
    const { limit } = listQuery.parse({ limit: params.get("limit") ?? undefined });
    const warehouse = db();
    // `?app=a&app=b`, as the report routes take it: the rules concerning those apps.
    const asked = params.getAll("app").map((v) => v.trim());
    if (asked.some((a) => a === "" || a.length > 63)) throw badRequest("app: must be a platform app id", { parameter: "app" });
    const appIds = asked.length > 0 ? asked : undefined;
    if (appIds) await checkAppsVisible(warehouse, caller, appIds);
    if (id !== null) return Response.json({ data: await getRule(warehouse, caller, id), history: await listHistory(warehouse, caller, { ruleId: id, limit }) });
    return Response.json({ data: await listRules(warehouse, caller, appIds), firing: await firingCount(warehouse, caller, appIds), history: await listHistory(warehouse, caller, { limit, appIds }) });
  });
}

export function postAlert(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const { rule, secret } = await createRule(db(), caller, await readJsonObject(request));
    return Response.json({ data: rule, ...(secret ? { secret } : {}) }, { status: 201 });
  });
}

export function patchAlert(request: Request, idArg: RuleIdArg): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const id = ruleId(idArg);
    const { rule, secret } = await updateRule(db(), caller, id, await readJsonObject(request));
    return Response.json({ data: rule, ...(secret ? { secret } : {}) });
  });
}

export function deleteAlert(request: Request, idArg: RuleIdArg): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const id = ruleId(idArg);
    return Response.json({ data: await deleteRule(db(), caller, id) });
  });
}
