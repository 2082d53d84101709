import { db } from "@/db";
import { authorize } from "@/lib/auth/authorize";
import { parseId, respond } from "@/lib/auth/route-support";
import { removeView } from "@/lib/auth/saved-views";

export const dynamic = "force-dynamic";

/** DELETE /api/v1/views/{id}: the owner's or an admin's; 404 otherwise. */
export function DELETE(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    await removeView(db(), caller, parseId((await params).id));
    return Response.json({ data: { removed: true } });
  });
}
