import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { forwardedClient, normaliseAddress, type TrustedProxies } from "@/lib/http/trusted-proxies";

/**
 * What one client may hold of the server: slow or stalled clients are cut off, and
 * one address cannot open connections without bound (docs/decisions/0009-hostile-clients.md).
 *
 * - headers: the whole request head must arrive within this (Node answers 408, closes);
 * - request: the whole request, body included (a webhook body dribbled a byte a
 *   second is cut off here; answers are not limited: a long CSV download is fine);
 * - idle: a connection with nothing moving in either direction, and a kept-alive
 *   connection between requests, is closed after this. Not while the server itself is
 *   still working out an answer to a request it has whole (no byte of the answer sent
 *   yet): the first report after a start waits for the store to load, a minute or more
 *   on a 10M-call warehouse, and the client is not the one stalling then;
 * - per address: connections past the cap are answered 503 with Retry-After and
 *   closed at once, before anything is read (0: no cap). A trusted reverse proxy
 *   (`TRUSTED_PROXIES`) carries every client on its own connections: its connections
 *   are not capped, and the cap counts instead the requests in flight of each client
 *   its X-Forwarded-For names (answered the same 503 past the cap).
 */
export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnectionsPerAddress: number;
  /** Peers whose X-Forwarded-For names the client (lib/http/trusted-proxies.ts); none when absent. */
  trustedProxies?: TrustedProxies;
}

/** How often Node checks the header and request time-outs (its default is 30 s). */
export function connectionsCheckingIntervalMs(limits: HttpLimits): number {
  return Math.max(250, Math.min(1_000, limits.headersTimeoutMs / 4));
}

const BUSY_BODY = JSON.stringify({
  error: { code: "too_many_connections", message: "Too many open connections from your address; retry shortly." },
});
const BUSY_HEADERS = {
  "Content-Type": "application/json; charset=utf-8",
  "Content-Length": Buffer.byteLength(BUSY_BODY),
  "Retry-After": "1",
  "Cache-Control": "no-store",
};
const BUSY_RESPONSE = [
  "HTTP/1.1 503 Service Unavailable",
  "Content-Type: application/json; charset=utf-8",
  `Content-Length: ${Buffer.byteLength(BUSY_BODY)}`,
  "Retry-After: 1",
  "Cache-Control: no-store",
  "Connection: close",
  "",
  BUSY_BODY,
].join("\r\n");

/**
 * Applies the limits to `server` (created with `connectionsCheckingInterval` from
 * above). Returns the check for the request handler: true when the request came on a
 * connection refused by the cap, which must not be handled.
 */
export function applyHttpLimits(server: Server, limits: HttpLimits): (req: IncomingMessage) => boolean {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
  server.keepAliveTimeout = limits.idleTimeoutMs;
  server.timeout = limits.idleTimeoutMs;

  // The answer each socket is working on (a socket serves one request at a time).
  const answering = new WeakMap<Socket, ServerResponse>();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    answering.set(req.socket, res);
    res.once("close", () => {
      if (answering.get(req.socket) === res) answering.delete(req.socket);
    });
  });
  // With a listener here Node no longer destroys the idle socket itself: it is ours to do.
  server.on("timeout", (socket: Socket) => {
    const res = answering.get(socket);
    if (res && res.req.complete && !res.headersSent && !res.writableEnded) {
      socket.setTimeout(limits.idleTimeoutMs); // the server is slow, not the client: look again later
      return;
    }
    socket.destroy();
  });

  const open = new Map<string, number>();
  const refused = new WeakSet<Socket>();
  const refusedRequests = new WeakSet<IncomingMessage>();
  const proxies = limits.trustedProxies;
  server.on("connection", (socket: Socket) => {
    if (limits.maxConnectionsPerAddress <= 0) return;
    const address = (socket.remoteAddress ?? "unknown").replace(/^::ffff:/i, "");
    if (proxies?.contains(address)) return; // counted per forwarded client, request by request (below)
    const count = open.get(address) ?? 0;
    if (count >= limits.maxConnectionsPerAddress) {
      refused.add(socket);
      socket.end(BUSY_RESPONSE);
      // A client that never reads its answer does not keep the socket either.
      socket.setTimeout(1_000, () => socket.destroy());
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  // Behind a trusted proxy: the requests in flight of each client it forwards.
  const inFlight = new Map<string, number>();
  if (proxies && limits.maxConnectionsPerAddress > 0) {
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      const peer = normaliseAddress(req.socket.remoteAddress ?? "");
      if (!proxies.contains(peer)) return;
      const client = forwardedClient(headerText(req.headers["x-forwarded-for"]), proxies) ?? peer;
      const count = inFlight.get(client) ?? 0;
      if (count >= limits.maxConnectionsPerAddress) {
        refusedRequests.add(req);
        res.writeHead(503, BUSY_HEADERS).end(BUSY_BODY);
        return;
      }
      inFlight.set(client, count + 1);
      res.once("close", () => {
        const left = (inFlight.get(client) ?? 1) - 1;
        if (left <= 0) inFlight.delete(client);
        else inFlight.set(client, left);
      });
    });
  }
  return (req) => refused.has(req.socket) || refusedRequests.has(req);
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(",") : value;
}
