import type { IncomingMessage, ServerResponse } from "node:http";
import { securityHeaders } from "@/lib/http/security-headers";

const HEADERS: Record<string, string> = Object.fromEntries(securityHeaders(false).map((h) => [h.key.toLowerCase(), h.value]));

/** How long a refused request's unread body may keep arriving after the answer before its connection is cut. */
const LINGER_MS = 1_000;

/**
 * `{error: {code, message}}` with `status`, from node:http in front of Next. When the
 * request's body is not read (refused before it was), the connection is closed after the
 * answer: the rest of the body is never read into this process, and the client gets a
 * short while to read the answer before the socket goes (cutting at once could reset it
 * before the answer arrives).
 */
export function sendJsonError(req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const json = JSON.stringify({ error: { code, message } });
  const hasBody = !req.complete && (req.headers["content-length"] !== undefined ? Number(req.headers["content-length"]) > 0 : req.headers["transfer-encoding"] !== undefined);
  res.writeHead(status, {
    ...HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
    "cache-control": "no-store",
    ...(hasBody ? { connection: "close" } : {}),
    ...extra,
  });
  res.end(json, () => {
    if (hasBody) setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  });
}
