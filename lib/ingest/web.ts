import { getIngestor } from "./runtime";
import type { Ingestor, IngestResult } from "./ingest";

/**
 * The same ingest behind a Fetch-API handler, for the Next.js route
 * (app/api/webhooks/[appId]/route.ts) under `next dev` / `next start` without the
 * custom server. Production traffic takes the lean node:http path instead.
 */
function toResponse(result: IngestResult): Response {
  return Response.json(result.body, { status: result.status, headers: { "Cache-Control": "no-store", ...result.headers } });
}

export async function handleWebhookRequest(request: Request, appId: string, ingestor: Ingestor = getIngestor()): Promise<Response> {
  const receivedMs = Date.now();
  const pre = await ingestor.preflight(request.method, appId, {
    contentType: request.headers.get("content-type"),
    contentLength: request.headers.get("content-length"),
    authorization: request.headers.get("authorization"),
  });
  if (!pre.ok) return toResponse(pre.result);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > ingestor.maxBodyBytes) {
        await reader.cancel().catch(() => undefined);
        return toResponse(ingestor.tooLarge(pre.app));
      }
      chunks.push(value);
    }
  }
  const body = Buffer.concat(chunks, size);
  return toResponse(await ingestor.accept(pre.app, body, receivedMs));
}
