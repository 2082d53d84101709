import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest, type ClientRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { THROTTLE } from "@/lib/auth/throttle";
import { resetEnvForTests } from "@/lib/config/env";
import { startReverseProxy, type ReverseProxy } from "@/lib/testing/reverse-proxy";
import { basicAuthHeader } from "@/lib/ingest/auth";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * TRUSTED_PROXIES through real proxies on loopback: clients reach an edge proxy
 * (connecting from 127.0.0.4), which forwards to an inner one (from 127.0.0.2), which
 * forwards to the server. Both proxies are trusted, so the client is the hop left of
 * them — each client its own sign-in throttle and its own share of the connection cap,
 * where before every client was the edge proxy. A client that talks to the server
 * directly cannot pick its address by writing X-Forwarded-For.
 */
const SECRET = "trusted-proxies-suite-secret-0123456789abc";
const CAP = 3;
const CLIENT_A = "127.0.0.10";
const CLIENT_B = "127.0.0.11";
const DIRECT = "127.0.0.3";

let dir = "";
let server: TestServer;
let inner: ReverseProxy;
let edge: ReverseProxy;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request from a chosen loopback address (fetch cannot pick its source address). */
function send(url: string, from: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers, ...(options.body === undefined ? {} : { "content-length": String(Buffer.byteLength(options.body)) }) };
    const req = httpRequest(url, { method: options.method ?? "GET", headers, localAddress: from, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A failed credentials sign-in as a browser sends it; the status says whether the throttle refused it (429). */
async function failedSignIn(base: string, from: string, email: string, forged?: string): Promise<number> {
  const extra: Record<string, string> = forged ? { "x-forwarded-for": forged } : {};
  const csrf = await send(`${base}/api/auth/csrf`, from, { headers: extra });
  // A cookie set twice in one answer: the last one counts, as in a browser.
  const jar = new Map(([] as string[]).concat(csrf.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]!.split(/=(.*)/s).slice(0, 2) as [string, string]));
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const res = await send(`${base}/api/auth/callback/credentials`, from, {
    method: "POST",
    headers: { ...extra, cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrfToken, email, password: "not-the-password" }).toString(),
  });
  return res.status;
}

describe.skipIf(SKIP_WITHOUT_BUILD)("TRUSTED_PROXIES (production server behind two proxies)", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-trusted-proxies-"));
    const file = path.join(dir, "warehouse.db");
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openDatabase(file);
    await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: "hook-password" });
    db.$client.close();
    server = await startTestServer({
      env: {
        DATABASE_PATH: file, AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off",
        TRUSTED_PROXIES: "127.0.0.2/32, 127.0.0.4",
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CAP),
      },
    });
    inner = await startReverseProxy({ upstream: server.base, localAddress: "127.0.0.2" });
    edge = await startReverseProxy({ upstream: inner.url, localAddress: "127.0.0.4" });
  }, 120_000);

  afterAll(async () => {
    await edge?.close();
    await inner?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("throttles the client behind the proxies, not the proxies: another client still gets in", async () => {
    for (let i = 0; i < THROTTLE.perAddress; i++) {
      // A forged first hop changes nothing: the trusted proxies appended the real one after it.
      expect(await failedSignIn(edge.url, CLIENT_A, `a${i}@example.com`, `203.0.113.${i + 1}`)).not.toBe(429);
    }
    expect(await failedSignIn(edge.url, CLIENT_A, "fresh-a@example.com")).toBe(429);
    expect(await failedSignIn(edge.url, CLIENT_B, "fresh-b@example.com")).not.toBe(429);
  }, 120_000);

  it("believes no X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    for (let i = 0; i < THROTTLE.perAddress; i++) {
      expect(await failedSignIn(server.base, DIRECT, `d${i}@example.com`, `198.51.100.${i + 1}`)).not.toBe(429);
    }
    expect(await failedSignIn(server.base, DIRECT, "fresh-d@example.com", "198.51.100.200")).toBe(429);
  }, 120_000);

  it("caps the requests in flight per client behind the proxies, not the proxies' connections", async () => {
    // CAP webhook deliveries from client A whose bodies have not arrived yet: in flight at the server.
    const held: ClientRequest[] = [];
    const auth = basicAuthHeader("hook", "hook-password");
    for (let i = 0; i < CAP; i++) {
      const req = httpRequest(`${edge.url}/api/webhooks/acme`, {
        method: "POST",
        localAddress: CLIENT_A,
        agent: false,
        headers: { authorization: auth, "content-type": "application/json", "content-length": "1000" },
      });
      req.on("error", () => undefined);
      req.write("{");
      held.push(req);
    }
    try {
      await new Promise((r) => setTimeout(r, 500));
      const over = await send(`${edge.url}/api/health`, CLIENT_A);
      expect(over.status).toBe(503);
      expect(over.headers["retry-after"]).toBe("1");
      expect(JSON.parse(over.body)).toMatchObject({ error: { code: "too_many_connections" } });
      // Client B, through the same proxies, is served.
      expect((await send(`${edge.url}/api/health`, CLIENT_B)).status).toBe(200);
    } finally {
      for (const req of held) req.destroy();
    }
    await new Promise((r) => setTimeout(r, 500));
    expect((await send(`${edge.url}/api/health`, CLIENT_A)).status).toBe(200);
  }, 60_000);
});
