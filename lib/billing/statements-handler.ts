/**
 * `GET /api/v1/statements?month=YYYY-MM&tz=…&app=…[&detail=participants][&format=csv]`
 * and `POST /api/v1/statements` (admins: issue one app's month). Parse (zod), authorize
 * (lib/auth), call lib/billing, answer JSON, CSV or `{error: {code, message}}`.
 */
import { z } from "zod";
import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { readResolvedApps } from "@/lib/analytics/scope";
import { isValidTimeZone } from "@/lib/time/tz";
import { authorize as realAuthorize, requireAdmin, type Caller } from "@/lib/auth/authorize";
import { readJsonObject } from "@/lib/auth/route-support";
import { csvDownloadName } from "@/lib/analytics/csv-filename";
import { csvResponse } from "@/lib/export/csv";
import { toErrorResponse } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { STATEMENT_CSV_COLUMNS, statementCsvRows } from "./csv";
import { issueStatement } from "./issue";
import { isMonth } from "./month";
import { statementsJson } from "./statements";

export interface StatementRouteDeps {
  db: () => Db;
  authorize: (request: Request) => Promise<Caller>;
  /** Epoch seconds (tests pin it). */
  now?: () => number;
}

const productionDeps: StatementRouteDeps = { db: warehouse, authorize: realAuthorize };

const month = z.string({ error: "is required (YYYY-MM)" }).refine(isMonth, { error: (i) => `"${String(i.input)}" is not a month (YYYY-MM)` });
const tz = z
  .string()
  .default("UTC")
  .refine(isValidTimeZone, { error: (i) => `"${String(i.input)}" is not an IANA time zone (e.g. UTC, Europe/Berlin, Asia/Kathmandu)` });
const appId = z.string().trim().min(1).max(63);

const querySchema = z.object({
  month,
  tz,
  app: z.array(appId).max(100),
  detail: z.enum(["participants", "none"]).default("none"),
  format: z.enum(["json", "csv"]).default("json"),
});

const issueSchema = z.strictObject({ month, tz, app: appId, carry: z.boolean().default(true) });

/** One value per name, except `app` (repeatable); a repeated single value is a 400 like the analytics routes. */
function queryObject(params: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = { app: params.getAll("app") };
  for (const name of ["month", "tz", "detail", "format"]) {
    const all = params.getAll(name);
    if (all.length > 1) throw new z.ZodError([{ code: "custom", path: [name], message: "may be given only once", input: all }]);
    if (all.length === 1) out[name] = all[0];
  }
  return out;
}

const secondsNow = () => Math.floor(Date.now() / 1000);

export async function handleStatementsGet(request: Request, deps: StatementRouteDeps = productionDeps): Promise<Response> {
  try {
    // The caller first: nothing about the query is answered to an unauthenticated request.
    const caller = await deps.authorize(request);
    const params = new URL(request.url).searchParams;
    // An app the caller may not see is a 404 whatever else the query says, as on every
    // report route: a 400 for the month first would tell the two cases apart.
    const asked = params.getAll("app").map((a) => a.trim());
    if (asked.length > 0 && asked.every((a) => appId.safeParse(a).success)) await readResolvedApps(deps.db(), { apps: asked }, caller);
    const q = querySchema.parse(queryObject(params));
    const body = await statementsJson(deps.db(), { month: q.month, tz: q.tz, apps: q.app, detail: q.detail === "participants" }, caller, (deps.now ?? secondsNow)());
    if (q.format === "csv") {
      // Named for the month, apps, detail and zone asked for (two downloads never share a name).
      const filename = csvDownloadName(`statements-${q.month}${q.detail === "participants" ? "-participants" : ""}`, { apps: q.app, tz: q.tz }, new Date(), { range: false });
      return csvResponse("statements", statementCsvRows(body.data), STATEMENT_CSV_COLUMNS, request.signal, { filename });
    }
    return Response.json(body, { headers: { "Cache-Control": "private, no-store" } });
  } catch (error) {
    return toErrorResponse(error, (e) => logger.error({ err: e, route: "statements" }, "statements route failed"));
  }
}

export async function handleStatementsPost(request: Request, deps: StatementRouteDeps = productionDeps): Promise<Response> {
  try {
    const caller = await deps.authorize(request);
    requireAdmin(caller);
    const body = issueSchema.parse(await readJsonObject(request));
    const statement = await issueStatement(deps.db(), caller, body, (deps.now ?? secondsNow)());
    return Response.json({ data: statement }, { status: 201, headers: { "Cache-Control": "no-store" } });
  } catch (error) {
    return toErrorResponse(error, (e) => logger.error({ err: e, route: "statements.issue" }, "statement issue failed"));
  }
}
