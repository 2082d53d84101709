import { handleCall } from "@/lib/analytics/call-handler";

export const dynamic = "force-dynamic";

export async function GET(request: Request, context: { params: Promise<{ sessionId: string }> }): Promise<Response> {
  const { sessionId } = await context.params;
  return handleCall(request, sessionId);
}
