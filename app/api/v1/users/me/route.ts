import { db } from "@/db";
import { listApps } from "@/lib/apps/registry";
import { authorize, canSeeApp } from "@/lib/auth/authorize";
import { respond } from "@/lib/auth/route-support";

export const dynamic = "force-dynamic";

/** GET /api/v1/users/me: who the session or token is, and the app ids it may see. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    const apps = (await listApps(db()))
      .filter((a) => canSeeApp(caller, a.pk))
      .map((a) => a.appId);
    return Response.json({ data: { id: caller.userId, email: caller.email, role: caller.role, apps } });
  });
}
