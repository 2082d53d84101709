import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { parseId, readJsonObject, respond } from "@/lib/auth/route-support";
import { removeUser, updateUser, type UpdateUserInput } from "@/lib/auth/users";
import { badRequest } from "@/lib/http/errors";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** PATCH /api/v1/users/{id} (admin): any of {email, password, role, apps, disabled}. */
export function PATCH(request: Request, { params }: Context): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const id = parseId((await params).id);
    const body = (await readJsonObject(request)) as UpdateUserInput;
    const warehouse = db();
    const user = await updateUser(warehouse, id, body);
    await audit(warehouse, caller, "user.update", user.email, {
      role: user.role,
      apps: user.apps,
      disabled: user.disabled,
      passwordChanged: body.password !== undefined,
    });
    return Response.json({ data: user });
  });
}

/** DELETE /api/v1/users/{id} (admin): removes the user, their grants and tokens. */
export function DELETE(request: Request, { params }: Context): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const id = parseId((await params).id);
    if (id === caller.userId) throw badRequest("you cannot remove yourself");
    const warehouse = db();
    const user = await removeUser(warehouse, id);
    await audit(warehouse, caller, "user.remove", user.email);
    return Response.json({ data: user });
  });
}
