import { authorize } from "@/lib/auth/authorize";
import { HttpError, toErrorResponse } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { analyticsEngine } from "./engine";
import { privateJson, type RouteDeps } from "./report-handler";

/** GET /api/v1/calls/{sessionId}?app=: one call with participants and recordings. */
export async function handleCall(request: Request, sessionId: string, deps: RouteDeps = { authorize, engine: analyticsEngine }): Promise<Response> {
  try {
    // Authorize first: an unsigned request learns nothing, not even that `app` is missing.
    const caller = await deps.authorize(request);
    const apps = new URL(request.url).searchParams.getAll("app");
    if (apps.length !== 1 || apps[0].trim() === "") {
      throw new HttpError(400, "invalid_parameter", "app: give exactly one app id (the call's tenant app)", { parameter: "app" });
    }
    const data = await deps.engine().call({ app: apps[0].trim(), sessionId }, caller, request.signal);
    return Response.json({ data }, { headers: privateJson });
  } catch (error) {
    return toErrorResponse(error, (e) => logger.error({ err: e, route: "call" }, "analytics route failed"));
  }
}
