import { handleCall } from "@/lib/analytics/http-call";

export const dynamic = "force-dynamic";

export async function GET(request: Request, context: { params: Promise<{ sessionId: string }> }): Promise<Response> {
  const { sessionId } = await context.params;
  return handleCall(request, sessionId);
}
