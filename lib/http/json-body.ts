import { HttpError } from "./errors";

/**
 * The most a JSON request body may hold: 1 MiB. The largest real one (an alert rule
 * with every filter, a user with a hundred app grants) is a few KB. The custom server
 * refuses a larger declared Content-Length before reading a byte (lib/server/body-gate.ts);
 * a body without a length is counted here as it streams and cut at the cap.
 * Documented in docs/api.md.
 */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

export const payloadTooLarge = () =>
  new HttpError(413, "payload_too_large", `The request body is larger than ${MAX_JSON_BODY_BYTES.toLocaleString("en-US")} bytes, the most a JSON body may be.`, { limit: MAX_JSON_BODY_BYTES });

/** The body as UTF-8 text, read as it streams and refused (413) past `limit` bytes without reading on. */
export async function readBodyText(request: Request, limit = MAX_JSON_BODY_BYTES): Promise<string> {
  if (Number(request.headers.get("content-length") ?? 0) > limit) throw payloadTooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}
