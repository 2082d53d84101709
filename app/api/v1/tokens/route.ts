import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { createApiToken, listApiTokens } from "@/lib/auth/tokens";
import { resolveUser } from "@/lib/auth/users";
import { badRequest } from "@/lib/http/errors";

export const dynamic = "force-dynamic";

/** GET /api/v1/tokens[?email=] (admin): tokens without their secret part. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    requireAdmin(await authorize(request));
    const warehouse = db();
    const email = new URL(request.url).searchParams.get("email");
    const userId = email ? resolveUser(warehouse, email).pk : undefined;
    return Response.json({ data: listApiTokens(warehouse, { userId }) });
  });
}

/** POST /api/v1/tokens (admin): {email, name?} → the token, in this answer only. */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const body = await readJsonObject(request);
    if (typeof body.email !== "string") throw badRequest("email is required", { parameter: "email" });
    if (body.name !== undefined && typeof body.name !== "string") throw badRequest("name must be a string", { parameter: "name" });
    const warehouse = db();
    const user = resolveUser(warehouse, body.email);
    const { token, view } = createApiToken(warehouse, { userId: user.pk, name: body.name });
    audit(warehouse, caller, "token.create", `token ${view.id}`, { name: view.name, for: view.email });
    return Response.json({ data: { ...view, token } }, { status: 201 });
  });
}
