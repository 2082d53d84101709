import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";
import { basicAuthHeader } from "@/lib/ingest/auth";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * Slow and stalled clients against the production server, with real sockets that
 * dribble bytes (issue 12, item 6). The server runs with short limits (2 s for the
 * head, 3 s for a whole request, 2 s idle, 30 connections per address) so that the
 * suite is quick; before they existed Node's defaults (60 s, 300 s, 65 s, no cap)
 * kept every one of these sockets open for the whole test.
 */
const SECRET = "http-limits-suite-secret-0123456789abcdef";
const AUTH = basicAuthHeader("hook", "hook-password");
/** How long a socket may stay open before the test gives up on the server closing it. */
const GIVE_UP_MS = 15_000;
const CAP = 30;

interface Outcome {
  closedByServer: boolean;
  response: string;
}

/** A client that sends `head`, then one byte of `drip` every `everyMs`, until the server closes it. */
function dribble(port: number, head: string, drip = "x", everyMs = 250): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let response = "";
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedByServer, response });
    };
    socket.on("data", (c: Buffer) => {
      response += c.toString("latin1");
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => socket.write(head));
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(drip);
    }, everyMs);
    const giveUp = setTimeout(() => finish(false), GIVE_UP_MS);
  });
}

const webhookHead = (contentLength: number) =>
  `POST /api/webhooks/acme HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;

describe.skipIf(SKIP_WITHOUT_BUILD)("slow clients against the production server", () => {
  let dir = "";
  let server: TestServer;
  let port = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-http-limits-"));
    const file = path.join(dir, "warehouse.db");
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openDatabase(file);
    await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: "hook-password" });
    db.$client.close();
    server = await startTestServer({
      env: {
        DATABASE_PATH: file, AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off",
        HTTP_HEADERS_TIMEOUT_SECONDS: "2", HTTP_REQUEST_TIMEOUT_SECONDS: "3", HTTP_IDLE_TIMEOUT_SECONDS: "2",
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CAP),
      },
    });
    port = server.port;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("cuts off clients that dribble their request head", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => dribble(port, "POST /api/webhooks/acme HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", "a")),
    );
    expect(outcomes.filter((o) => !o.closedByServer)).toHaveLength(0);
    for (const o of outcomes) if (o.response) expect(o.response).toMatch(/^HTTP\/1\.1 408/);
  });

  it("cuts off clients that dribble a webhook body, and stores nothing of it", async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => dribble(port, webhookHead(4_000), " ")));
    expect(outcomes.filter((o) => !o.closedByServer)).toHaveLength(0);
    for (const o of outcomes) expect(o.response).not.toMatch(/^HTTP\/1\.1 200/);
  });

  it("closes a kept-alive connection that goes idle", async () => {
    const outcome = await dribble(port, "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n", "", 60_000);
    expect(outcome.closedByServer).toBe(true);
    expect(outcome.response).toMatch(/^HTTP\/1\.1 200/);
  });

  it("answers 503 + Retry-After past the per-address cap, and serves again once connections close", async () => {
    const held: Socket[] = [];
    try {
      for (let i = 0; i < CAP; i++) {
        const s = connect(port, "127.0.0.1");
        await new Promise((r) => s.once("connect", r));
        held.push(s);
      }
      const over = await dribble(port, "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "", 60_000);
      expect(over.closedByServer).toBe(true);
      expect(over.response).toMatch(/^HTTP\/1\.1 503/);
      expect(over.response).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(over.response).toContain('"too_many_connections"');
    } finally {
      for (const s of held) s.destroy();
    }
    // The server counts the closed ones down: a normal client gets in again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null))?.status ?? 0;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it("still takes a webhook from a client that sends it at once", async () => {
    const body = JSON.stringify({ trigger: "message_sent", appId: "acme", region: "us", webhook: "wh", data: { message: { id: "fast-1", sentAt: 1_700_000_000 } } });
    const res = await fetch(`http://127.0.0.1:${port}/api/webhooks/acme`, { method: "POST", headers: { authorization: AUTH, "content-type": "application/json" }, body });
    expect(res.status).toBe(200);
  });
});
