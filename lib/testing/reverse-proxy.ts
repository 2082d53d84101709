import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test support: a reverse proxy as nginx or a load balancer is one, in a real process
 * on loopback. It forwards every request as it came (path included: a sub-path stays),
 * from its own address (`localAddress`, e.g. 127.0.0.2: Linux answers the whole of
 * 127/8), appending the address it was reached from to X-Forwarded-For and setting
 * X-Forwarded-Host and X-Forwarded-Proto.
 */
export interface ReverseProxy {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startReverseProxy(options: {
  upstream: string;
  /** The address the proxy connects to the upstream from: what the upstream sees as its peer. */
  localAddress: string;
  /** Where it listens (default 127.0.0.1). */
  host?: string;
}): Promise<ReverseProxy> {
  const upstream = new URL(options.upstream);
  const server: Server = createServer((req, res) => {
    const peer = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
    const prior = req.headers["x-forwarded-for"];
    const headers = {
      ...req.headers,
      "x-forwarded-for": prior ? `${Array.isArray(prior) ? prior.join(", ") : prior}, ${peer}` : peer,
      "x-forwarded-host": req.headers["x-forwarded-host"] ?? req.headers.host ?? "",
      "x-forwarded-proto": req.headers["x-forwarded-proto"] ?? "http",
      host: upstream.host,
    };
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, localAddress: options.localAddress, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    out.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
