import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { createApiToken, listApiTokens, parseTokenExpiry, parseTokenScope } from "@/lib/auth/tokens";
import { resolveUser } from "@/lib/auth/users";
import { badRequest } from "@/lib/http/errors";

export const dynamic = "force-dynamic";

/** GET /api/v1/tokens[?email=] (admin): tokens without their secret part. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    requireAdmin(await authorize(request));
    const warehouse = db();
    const email = new URL(request.url).searchParams.get("email");
    const userId = email ? (await resolveUser(warehouse, email)).pk : undefined;
    return Response.json({ data: await listApiTokens(warehouse, { userId }) });
  });
}

/** POST /api/v1/tokens (admin): {email, name?, scope?: "full"|"read", expires?: "30d"} → the token, in this answer only. */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const body = await readJsonObject(request);
    if (typeof body.email !== "string") throw badRequest("email is required", { parameter: "email" });
    for (const key of ["name", "scope", "expires"] as const) {
      if (body[key] !== undefined && body[key] !== null && typeof body[key] !== "string") throw badRequest(`${key} must be a string`, { parameter: key });
    }
    const scope = parseTokenScope(body.scope as string | undefined);
    const expiresMs = parseTokenExpiry(body.expires as string | undefined);
    const warehouse = db();
    const user = await resolveUser(warehouse, body.email);
    const { token, view } = await createApiToken(warehouse, { userId: user.pk, name: body.name as string | undefined, scope, expiresMs });
    await audit(warehouse, caller, "token.create", `token ${view.id}`, { name: view.name, for: view.email, scope, expiresMs });
    return Response.json({ data: { ...view, token } }, { status: 201 });
  });
}
