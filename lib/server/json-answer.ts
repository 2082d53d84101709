import type { IncomingMessage, ServerResponse } from "node:http";
import { securityHeaders } from "@/lib/http/security-headers";

const HEADERS: Record<string, string> = Object.fromEntries(securityHeaders(false).map((h) => [h.key.toLowerCase(), h.value]));

/** How long a refused request's unread body may keep arriving after the answer before its connection is cut. */
const LINGER_MS = 1_000;

/**
 * `{error: {code, message}}` with `status`, from node:http in front of Next. When the
 * request's body is not read (refused before it was), the connection is closed after the
 * answer, as a lingering close: the answer goes out followed by our FIN, what the client
 * still sends is discarded unparsed for at most LINGER_MS, then the socket is cut. Node's
 * own close for `Connection: close` destroys the socket as soon as the answer is written;
 * with the client's body still arriving, that resets the connection and the client's
 * kernel may drop the answer before the client reads it.
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
  if (hasBody) {
    const socket = req.socket;
    // Called by node:http once a `Connection: close` answer is written (see above).
    socket.destroySoon = () => {
      socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
  }
  res.end(json);
}
