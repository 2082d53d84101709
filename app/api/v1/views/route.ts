import { db } from "@/db";
import { authorize } from "@/lib/auth/authorize";
import { readJsonObject, respond } from "@/lib/auth/route-support";
import { createView, listViews } from "@/lib/auth/saved-views";

export const dynamic = "force-dynamic";

/** GET /api/v1/views: the caller's saved views and those other users shared. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    return Response.json({ data: await listViews(db(), caller) });
  });
}

/** POST /api/v1/views: {name, path, query, shared?}; 201 with the view. */
export function POST(request: Request): Promise<Response> {
  return respond(async () => {
    const caller = await authorize(request);
    return Response.json({ data: await createView(db(), caller, await readJsonObject(request)) }, { status: 201 });
  });
}
