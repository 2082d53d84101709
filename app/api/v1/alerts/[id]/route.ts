import { deleteAlert, getAlerts, patchAlert, withRuleId } from "../handlers";

export const dynamic = "force-dynamic";

/** `/api/v1/alerts/{id}`: the same as `/api/v1/alerts?id={id}` (docs/api.md). */
type Context = { params: Promise<{ id: string }> };

export async function GET(request: Request, { params }: Context): Promise<Response> {
  return withRuleId((await params).id, (id) => getAlerts(request, id));
}

export async function PATCH(request: Request, { params }: Context): Promise<Response> {
  return withRuleId((await params).id, (id) => patchAlert(request, id));
}

export async function DELETE(request: Request, { params }: Context): Promise<Response> {
  return withRuleId((await params).id, (id) => deleteAlert(request, id));
}
