import { deleteAlert, getAlerts, patchAlert, postAlert } from "./handlers";

export const dynamic = "force-dynamic";

const idOf = (request: Request) => ({ raw: new URL(request.url).searchParams.get("id"), from: "query" as const });

/** GET /api/v1/alerts[?id=N][&limit=50]: the rules the caller may see, their state and history (docs/api.md). */
export function GET(request: Request): Promise<Response> {
  const id = idOf(request);
  return getAlerts(request, id.raw === null ? null : id);
}

/** POST /api/v1/alerts (admin): a new rule; `secret` (the destination's signing secret) in this answer only. */
export function POST(request: Request): Promise<Response> {
  return postAlert(request);
}

/** PATCH /api/v1/alerts?id=N (admin): any field; `{rotateSecret: true}` answers a new secret. */
export function PATCH(request: Request): Promise<Response> {
  return patchAlert(request, idOf(request));
}

/** DELETE /api/v1/alerts?id=N (admin). */
export function DELETE(request: Request): Promise<Response> {
  return deleteAlert(request, idOf(request));
}
