import { deleteAlert, getAlerts, patchAlert } from "../handlers";

export const dynamic = "force-dynamic";

/** `/api/v1/alerts/{id}`: the same as `/api/v1/alerts?id={id}` (docs/api.md). */
type Context = { params: Promise<{ id: string }> };

const idOf = async ({ params }: Context) => ({ raw: (await params).id, from: "path" as const });

export async function GET(request: Request, context: Context): Promise<Response> {
  return getAlerts(request, await idOf(context));
}

export async function PATCH(request: Request, context: Context): Promise<Response> {
  return patchAlert(request, await idOf(context));
}

export async function DELETE(request: Request, context: Context): Promise<Response> {
  return deleteAlert(request, await idOf(context));
}
