import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PlatformAuthError, PlatformHttpError } from "./errors";
import { createApp, parseCreateAppAnswer } from "./management-client";

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function serve(status: number, body: unknown): Promise<{ url: string; seen: Array<{ req: IncomingMessage; body: string }> }> {
  const seen: Array<{ req: IncomingMessage; body: string }> = [];
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      seen.push({ req, body: text });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("management client", () => {
  it("POSTs {name, version, region} with key and secret headers", async () => {
    const { url, seen } = await serve(200, { data: { appId: "abc123", apiKey: "k-1" } });
    const app = await createApp({ managementUrl: url, key: "K", secret: "S" }, { name: "Acme", version: "2.0", region: "eu" });
    expect(app).toMatchObject({ appId: "abc123", apiKey: "k-1", region: "eu" });
    expect(seen[0].req.method).toBe("POST");
    expect(seen[0].req.url).toBe("/apps");
    expect(seen[0].req.headers.key).toBe("K");
    expect(seen[0].req.headers.secret).toBe("S");
    expect(seen[0].req.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen[0].body)).toEqual({ name: "Acme", version: "2.0", region: "eu" });
  });

  it("follows no redirect: the key and secret never reach the origin a 302 names", async () => {
    const elsewhere = await serve(200, { data: { appId: "stolen" } });
    const trap = server!;
    const redirecting = createServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/apps` });
      res.end();
    });
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
      const err = await createApp({ managementUrl: url, key: "K-secret", secret: "S-secret" }, { name: "A", region: "us" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PlatformHttpError);
      expect((err as Error).message).toMatch(/HTTP 307, a redirect to .* \(another origin\)/);
      expect(elsewhere.seen).toHaveLength(0);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((r) => redirecting.close(() => r()));
      server = trap;
    }
  });

  it("finds app id and key at the top level or under data", () => {
    expect(parseCreateAppAnswer({ appId: "a", apiKey: "k" })).toEqual({ appId: "a", apiKey: "k" });
    expect(parseCreateAppAnswer({ data: { app_id: 7, restApiKey: "k" } })).toEqual({ appId: "7", apiKey: "k" });
    expect(parseCreateAppAnswer({ data: { app: { id: "x" } } })).toEqual({ appId: "x", apiKey: undefined });
  });

  it("reports auth failures and answers without an app id clearly", async () => {
    const { url } = await serve(401, { error: { code: "ERR_AUTH", message: "bad key" } });
    await expect(createApp({ managementUrl: url, key: "K", secret: "S" }, { name: "A", region: "us" })).rejects.toBeInstanceOf(PlatformAuthError);
    await new Promise<void>((r) => server!.close(() => r()));
    const { url: url2 } = await serve(201, { ok: true });
    server = server!;
    await expect(createApp({ managementUrl: url2, key: "K", secret: "S" }, { name: "A", region: "us" })).rejects.toThrow(/no app id/);
    await expect(createApp({ managementUrl: url2, key: "K", secret: "S" }, { name: "A", region: "mars" })).rejects.toThrow(/region/);
  });
});
