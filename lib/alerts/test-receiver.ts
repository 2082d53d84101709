/**
 * Test support: a real HTTP receiver on a free loopback port that records every request
 * (headers and raw body) and answers with the statuses it is told, in turn.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Statuses of the next answers, in order; afterwards `fallback` (default 200). */
  answers: number[];
  fallback: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const state = { answers: [] as number[], fallback: 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), path: req.url ?? "" });
      const status = state.answers.shift() ?? state.fallback;
      res.writeHead(status, status >= 300 && status < 400 ? { location: "http://169.254.169.254/latest/meta-data/" } : {}).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/callboard`,
    port,
    received,
    get answers() {
      return state.answers;
    },
    set answers(v: number[]) {
      state.answers = v;
    },
    get fallback() {
      return state.fallback;
    },
    set fallback(v: number) {
      state.fallback = v;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
