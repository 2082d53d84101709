import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { createUser, listUsers, type CreateUserInput } from "@/lib/auth/users";

export const dynamic = "force-dynamic";

/** GET /api/v1/users (admin): every user, without password hashes. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    requireAdmin(await authorize(request));
    return Response.json({ data: await listUsers(db()) });
  });
}

/** POST /api/v1/users (admin): {email, password, role?, apps?, disabled?}. */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const warehouse = db();
    const user = await createUser(warehouse, (await readJsonObject(request)) as CreateUserInput);
    await audit(warehouse, caller, "user.create", user.email, { role: user.role, apps: user.apps, disabled: user.disabled });
    return Response.json({ data: user }, { status: 201 });
  });
}
