import { handleWebhookRequest } from "@/lib/ingest/web";

/**
 * Webhook ingest under plain `next dev` / `next start`. `npm start` answers this path
 * from the lean node:http handler (lib/ingest/webhook-handler.ts, wired in front of Next by
 * lib/server/start.ts) before Next sees it; both call the same lib/ingest code
 * (docs/decisions/0003-webhook-ingest.md).
 */
export const dynamic = "force-dynamic";
export const runtime = "nodejs";

type Context = { params: Promise<{ appId: string }> };

async function handler(request: Request, context: Context): Promise<Response> {
  const { appId } = await context.params;
  return handleWebhookRequest(request, appId);
}

export { handler as POST, handler as GET, handler as PUT, handler as PATCH, handler as DELETE };
