import { db } from "@/db";
import { authorize } from "@/lib/auth/authorize";
import { getPreferences, savePreferences } from "@/lib/auth/preferences";
import { readJsonObject, respond } from "@/lib/auth/route-support";

export const dynamic = "force-dynamic";

/** GET /api/v1/users/me/preferences: the caller's default time zone and apps. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    return Response.json({ data: await getPreferences(db(), caller.userId) });
  });
}

/** PUT /api/v1/users/me/preferences: any of {timeZone (IANA or null), apps (ids)}; audited. */
export function PUT(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    return Response.json({ data: await savePreferences(db(), caller, await readJsonObject(request)) });
  });
}
