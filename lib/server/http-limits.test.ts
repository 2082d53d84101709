import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { applyHttpLimits, connectionsCheckingIntervalMs, type HttpLimits } from "./http-limits";

/**
 * The idle limit against a plain Node server on loopback: it cuts a client that stalls,
 * never a request the server itself is still answering (the first report after a start
 * waits for the analytics store to load, over a minute on a 10M-call warehouse; before
 * this, such a request lost its connection with no answer at the idle limit).
 */
const LIMITS: HttpLimits = { headersTimeoutMs: 2_000, requestTimeoutMs: 3_000, idleTimeoutMs: 500, maxConnectionsPerAddress: 0 };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  server = createServer({ connectionsCheckingInterval: connectionsCheckingIntervalMs(LIMITS) }, handler);
  applyHttpLimits(server, LIMITS);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

function get(port: number): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", (e) => resolve({ error: e.message }));
    });
    req.on("error", (e) => resolve({ error: e.message }));
    req.end();
  });
}

describe("the idle limit", () => {
  it("lets the server take longer than the limit to start an answer", async () => {
    const port = await listen((_req, res) => {
      // Four idle periods with nothing on the wire, as a store loading behind a report.
      setTimeout(() => res.end("late but whole"), LIMITS.idleTimeoutMs * 4);
    });
    expect(await get(port)).toEqual({ status: 200, body: "late but whole" });
  });

  it("still closes a connection that sends nothing", async () => {
    const port = await listen((_req, res) => res.end("never asked"));
    const closedAfter = await new Promise<number>((resolve) => {
      const t0 = Date.now();
      const socket = connect(port, "127.0.0.1");
      socket.on("close", () => resolve(Date.now() - t0));
      socket.on("error", () => undefined);
      setTimeout(() => socket.destroy(), 10_000);
    });
    // Closed by the server's limits (head or idle), long before the test's own 10 s.
    expect(closedAfter).toBeLessThan(5_000);
  });

  it("still closes an answer the client stops reading", async () => {
    let closed = false;
    const port = await listen((_req, res) => {
      res.on("close", () => (closed = true));
      // More than the socket buffers hold: the writes stall once the client stops reading.
      const chunk = Buffer.alloc(1 << 20, 120);
      const pump = () => {
        while (res.write(chunk)) if (res.writableLength > 64 << 20) return;
        res.once("drain", pump);
      };
      pump();
    });
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    socket.once("data", () => socket.pause()); // the first bytes, then nothing read
    const deadline = Date.now() + 10_000;
    while (!closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    expect(closed).toBe(true);
  });
});
