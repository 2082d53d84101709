import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { authorize, requireAdmin } from "@/lib/auth/authorize";
import { parseId, respond } from "@/lib/auth/route-support";
import { revokeApiToken } from "@/lib/auth/tokens";

export const dynamic = "force-dynamic";

/** DELETE /api/v1/tokens/{id} (admin): revokes the token (the row stays, marked revoked). */
export function DELETE(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    requireAdmin(caller);
    const warehouse = db();
    const view = await revokeApiToken(warehouse, parseId((await params).id));
    await audit(warehouse, caller, "token.revoke", `token ${view.id}`, { name: view.name, for: view.email });
    return Response.json({ data: view });
  });
}
