import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createCallsClient, filtersToQuery, rawRecordText, type CallsClientOptions } from "./calls-client";
import { PlatformAuthError, PlatformHttpError, PlatformProtocolError, PlatformUnavailableError } from "./errors";
import { retryAfterMs } from "./get-json";
import { TokenBucket } from "./rate-limit";

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Handler): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, requests.length);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`, requests };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

const KEY = "sk_live_secret_api_key_123";
const noSleep = async () => undefined;

function client(url: string, extra: Partial<CallsClientOptions> = {}) {
  return createCallsClient({
    callsUrl: url,
    apiKey: KEY,
    appId: "app-one",
    timeoutMs: 500,
    maxAttempts: 4,
    sleep: noSleep,
    bucket: new TokenBucket(1_000_000),
    ...extra,
  });
}

/** A list server over `total` calls; `pageSize` is what it really uses. */
function listServer(total: number, opts: { ignorePerPage?: number; ignorePage?: boolean } = {}): Handler {
  return (req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    const page = opts.ignorePage ? 1 : Number(u.searchParams.get("page") ?? 1);
    const per = opts.ignorePerPage ?? Number(u.searchParams.get("perPage") ?? 100);
    const ids = Array.from({ length: total }, (_, i) => `s${total - i}`);
    const data = ids.slice((page - 1) * per, page * per).map((sessionId) => ({ sessionId }));
    json(res, 200, { data, meta: { pagination: { total, count: data.length, current_page: page, total_pages: Math.ceil(total / per) } } });
  };
}

async function collect(gen: AsyncGenerator<{ records: unknown[] }>): Promise<string[]> {
  const out: string[] = [];
  for await (const p of gen) for (const r of p.records) out.push((r as { sessionId: string }).sessionId);
  return out;
}

describe("calls client", () => {
  it("sends the apikey and onBehalfOf headers and all nine filters", async () => {
    const { url, requests } = await serve((_req, res) => json(res, 200, { data: [], meta: {} }));
    const c = client(url, { onBehalfOf: "admin-uid" });
    await c.listCallsPage(
      { type: "video", mode: "meet", participantsCount: 3, startedAt: 1700000000, status: "ended", receiverType: "group", endedAt: 1700000100, hasRecording: true, uid: "a b" },
      2,
      50,
    );
    const req = requests[0];
    expect(req.headers.apikey).toBe(KEY);
    expect(req.headers.onbehalfof).toBe("admin-uid");
    const q = new URL(req.url ?? "", "http://x").searchParams;
    expect(Object.fromEntries(q)).toEqual({
      type: "video", mode: "meet", participantsCount: "3", startedAt: "1700000000", status: "ended",
      receiverType: "group", endedAt: "1700000100", hasRecording: "true", uid: "a b", page: "2", perPage: "50",
    });
    expect(new URL(req.url ?? "", "http://x").pathname).toBe("/v3/calls");
    expect(filtersToQuery({ hasRecording: false }).toString()).toBe("hasRecording=false");
  });

  it("pages until total_pages and caps perPage at 1000", async () => {
    const { url, requests } = await serve(listServer(2500));
    const ids = await collect(client(url).pages({}, { perPage: 5000 }));
    expect(ids).toHaveLength(2500);
    expect(new Set(ids).size).toBe(2500);
    expect(requests.map((r) => new URL(r.url ?? "", "http://x").searchParams.get("perPage"))).toEqual(["1000", "1000", "1000"]);
  });

  it("stays correct when the server ignores perPage (uses the server's page count)", async () => {
    const { url } = await serve(listServer(95, { ignorePerPage: 10 }));
    const ids = await collect(client(url).pages({}, { perPage: 50 }));
    expect(ids).toHaveLength(95);
    expect(new Set(ids).size).toBe(95);
  });

  it("stops on an empty page when there is no pagination", async () => {
    const { url, requests } = await serve((req, res) => {
      const page = Number(new URL(req.url ?? "", "http://x").searchParams.get("page"));
      json(res, 200, { data: page <= 2 ? [{ sessionId: `p${page}` }] : [] });
    });
    expect(await collect(client(url).pages({}, { prefetch: 0 }))).toEqual(["p1", "p2"]);
    expect(requests).toHaveLength(3);
  });

  it("detects a server that ignores page and bounds the page count", async () => {
    const { url } = await serve((_req, res) => json(res, 200, { data: [{ sessionId: "same" }], meta: { pagination: { total_pages: 99 } } }));
    await expect(collect(client(url).pages())).rejects.toThrow(/ignore 'page'/);
    let n = 0;
    const { url: url2 } = await serve((_req, res) => json(res, 200, { data: [{ sessionId: `x${n++}` }] }));
    await expect(collect(client(url2).pages({}, { maxPages: 5, prefetch: 0 }))).rejects.toBeInstanceOf(PlatformProtocolError);
  });

  it("retries 429 honouring Retry-After, then succeeds", async () => {
    const sleeps: number[] = [];
    const { url } = await serve((_req, res, n) => {
      if (n === 1) return json(res, 429, { error: { code: "ERR_TOO_MANY_REQUESTS", message: "slow down" } }, { "retry-after": "2" });
      if (n === 2) return json(res, 429, {}, { "x-rate-limit-reset": String(Math.floor(Date.now() / 1000) + 3) });
      json(res, 200, { data: [{ sessionId: "a" }] });
    });
    const page = await client(url, { sleep: async (ms) => void sleeps.push(ms), random: () => 0 }).listCallsPage({}, 1, 10);
    expect(page.records).toHaveLength(1);
    expect(sleeps[0]).toBe(2000);
    expect(sleeps[1]).toBeGreaterThan(1000);
    expect(sleeps[1]).toBeLessThanOrEqual(3000);
  });

  it("parses Retry-After as an HTTP date and caps it", () => {
    const now = Date.parse("2024-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Mon, 01 Jan 2024 00:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ "x-rate-limit-reset": String(now / 1000 + 7) }), now)).toBe(7000);
    expect(retryAfterMs(new Headers({}), now)).toBeUndefined();
  });

  it("retries 5xx, truncated JSON and connection resets", async () => {
    const { url, requests } = await serve((req, res, n) => {
      if (n === 1) return json(res, 503, { error: { code: "UNAVAILABLE", message: "busy" } });
      if (n === 2) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end('{"data":[{"sessionId":"a"},{"sess');
      }
      if (n === 3) return req.socket.destroy();
      json(res, 200, { data: [{ sessionId: "a" }] });
    });
    const page = await client(url, { maxAttempts: 5 }).listCallsPage({}, 1, 10);
    expect(page.records).toEqual([{ sessionId: "a" }]);
    expect(requests).toHaveLength(4);
  });

  it("fetches again a page read ahead whose answer turns out not to be JSON, and gives up after the attempts", async () => {
    // Pages read ahead wait as bytes and are parsed when taken: a truncated one is found
    // then, and fetched again through the retrying path.
    const list = listServer(30);
    let page2Requests = 0;
    const { url } = await serve((req, res, n) => {
      const page = new URL(req.url ?? "/", "http://x").searchParams.get("page");
      if (page === "2" && ++page2Requests <= 2) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end('{"data":[{"sessionId":"s20"},{"sess');
      }
      list(req, res, n);
    });
    const ids = await collect(client(url).pages({}, { perPage: 10, prefetch: 2 }));
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => `s${30 - i}`));
    // Truncated when read ahead and on the first retrying attempt; whole on the second.
    expect(page2Requests).toBe(3);

    const broken = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"data":[{"sessionId":"a"},{"sess');
    });
    await expect(collect(client(broken.url, { maxAttempts: 3 }).pages({}, { prefetch: 2 }))).rejects.toThrow(/gave up after 3 attempts.*invalid or truncated JSON/);
    expect(broken.requests).toHaveLength(4);
  });

  it("times out a hung response and a stalled body, then retries", async () => {
    const { url } = await serve((_req, res, n) => {
      if (n === 1) return; // never answers
      if (n === 2) {
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        return res.write('{"data":['); // body stalls
      }
      json(res, 200, { data: [] });
    });
    const t0 = Date.now();
    const page = await client(url, { timeoutMs: 200 }).listCallsPage({}, 1, 10);
    expect(page.records).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("gives up after maxAttempts with PlatformUnavailableError and the last cause", async () => {
    const { url, requests } = await serve((_req, res) => json(res, 500, { error: { code: "INTERNAL", message: "boom" } }));
    const err = await client(url, { maxAttempts: 3 }).listCallsPage({}, 1, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformUnavailableError);
    expect((err as Error).message).toMatch(/app-one.*3 attempts.*HTTP 500 INTERNAL: boom/);
    expect((err as Error).message).not.toContain(KEY);
    expect(requests).toHaveLength(3);
  });

  it("fails at once on 401/403 with the app and the platform's code and message", async () => {
    const { url, requests } = await serve((_req, res) =>
      json(res, 401, { error: { code: "AUTH_ERR_APIKEY_NOT_FOUND", message: `The API key ${KEY} is invalid.` } }),
    );
    const err = await client(url).listCallsPage({}, 1, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformAuthError);
    expect((err as Error).message).toMatch(/app app-one/);
    expect((err as Error).message).toMatch(/AUTH_ERR_APIKEY_NOT_FOUND/);
    expect((err as Error).message).not.toContain(KEY);
    expect(requests).toHaveLength(1);
  });

  it("follows no redirect: the apikey never reaches the origin a 302 names, and the error names the redirect", async () => {
    const elsewhere = await serve((_req, res) => json(res, 200, { data: [], meta: {} }));
    const stolen = `${elsewhere.url.replace(/\/v3$/, "")}/stolen/calls`;
    const { url, requests } = await serve((_req, res) => {
      res.writeHead(302, { location: stolen });
      res.end();
    });
    const err = await client(url).listCallsPage({}, 1, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformHttpError);
    expect((err as PlatformHttpError).status).toBe(302);
    expect((err as Error).message).toMatch(/HTTP 302, a redirect to http:\/\/127\.0\.0\.1:\d+ \(another origin\)/);
    expect((err as Error).message).not.toContain(KEY);
    expect(requests).toHaveLength(1); // refused at once, not retried
    expect(elsewhere.requests).toHaveLength(0);
  });

  it("surfaces other 4xx as PlatformHttpError with code and message", async () => {
    const { url } = await serve((_req, res) => json(res, 400, { error: { code: "ERR_BAD_FILTER", message: "bad type" } }));
    const err = await client(url).listCallsPage({ type: "x" }, 1, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformHttpError);
    expect((err as PlatformHttpError).code).toBe("ERR_BAD_FILTER");
    expect((err as Error).message).toMatch(/HTTP 400 ERR_BAD_FILTER: bad type/);
  });

  it("gives every record exactly as a UTF-8 parse of the page would, whatever bytes its strings hold", async () => {
    // The page is parsed as one-byte text and each record that is not ASCII parsed again
    // from its own UTF-8 bytes: umlauts, a 4-byte emoji, a non-ASCII key, an escape beside
    // raw bytes, bytes that are not UTF-8 at all (U+FFFD either way), pretty-printing.
    const records = [
      `{"sessionId": "s\\u00e9-1", "participants": [{"uid": "plain"}]}`,
      `{"sessionId": "jürgen-2", "participants": [{"uid": "ß😀", "größe": {"ä": ["ö"]}}]}`,
      `{\n  "sessionId": "s3",\n  "note": "caf\\u00e9 and café"\n}`,
    ];
    const body = Buffer.concat([
      Buffer.from(`{"data": [${records.join(", ")}, {"sessionId": "bad-`),
      Buffer.from([0xff, 0xc3]),
      Buffer.from(`"}], "meta": {"pagination": {"total_pages": 1}}}`),
    ]);
    const duplicate = Buffer.from(`{"data": [{"sessionId": "a"}], "data": [{"sessionId": "ü-b"}, {"sessionId": "c"}]}`);
    const { url } = await serve((_req, res, n) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(n === 1 ? body : duplicate);
    });
    const page = await client(url).listCallsPage({}, 1, 10);
    expect(page.records).toEqual(JSON.parse(body.toString("utf8")).data);
    expect((page.records[1] as { sessionId: string }).sessionId).toBe("jürgen-2");
    expect((page.records[3] as { sessionId: string }).sessionId).toBe("bad-\ufffd\ufffd");
    const dup = await client(url).listCallsPage({}, 1, 10);
    expect(dup.raw).toBeUndefined();
    expect(dup.records).toEqual([{ sessionId: "ü-b" }, { sessionId: "c" }]);
  });

  it("returns each record's text as sent, pretty-printed and escaped, and none for a duplicate data key", async () => {
    const body = `{\n  "meta": {"pagination": {"total_pages": 1}},\n  "data": [\n    {"sessionId": "s\\u00e91", "x": [1, {"y": "]}"}]},\n    {"sessionId": "s2"}\n  ]\n}`;
    const { url } = await serve((_req, res, n) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(n === 1 ? body : `{"data": [{"sessionId": "a"}], "data": [{"sessionId": "b"}, {"sessionId": "c"}]}`);
    });
    const page = await client(url).listCallsPage({}, 1, 10);
    const texts = page.records.map((_r, i) => rawRecordText(page.raw!, i));
    expect(texts).toEqual([`{"sessionId": "s\\u00e91", "x": [1, {"y": "]}"}]}`, `{"sessionId": "s2"}`]);
    expect(texts.map((t) => JSON.parse(t))).toEqual(page.records);
    const dup = await client(url).listCallsPage({}, 1, 10);
    expect(dup.records).toHaveLength(2);
    expect(dup.raw).toBeUndefined();
  });

  it("refuses an answer over the size limit as it streams (no content-length), without retrying, and starts a page where asked", async () => {
    let chunksSent = 0;
    const { url, requests } = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" }); // chunked: no length announced
      res.write('{"data":[');
      const chunk = `${JSON.stringify({ sessionId: "x", pad: "y".repeat(16_000) })},`;
      const more = () => {
        // Far more than the limit unless the client hangs up.
        while (chunksSent < 10_000 && !res.destroyed) {
          chunksSent++;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end('{"sessionId":"z"}]}');
      };
      more();
    });
    const err = await client(url, { maxPageBytes: 256 * 1024 }).listCallsPage({}, 3, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformProtocolError);
    expect((err as Error).message).toMatch(/^Calls API of app app-one: page 3 is more than 0\.25 MB, over the limit of 0\.25 MB for one answer; refused/);
    expect(requests).toHaveLength(1);
    expect(chunksSent).toBeLessThan(10_000);

    const pages = await serve(listServer(350));
    const got = [];
    for await (const p of client(pages.url).pages({}, { perPage: 100, startPage: 3 })) got.push([p.page, p.records.length]);
    expect(got).toEqual([[3, 100], [4, 50]]);
  });

  it("refuses a page of more calls than the platform's maximum of 1,000", async () => {
    const { url } = await serve(listServer(1500, { ignorePerPage: 1500 }));
    await expect(client(url).listCallsPage({}, 1, 1000)).rejects.toThrow(/page 1 holds 1,500 calls, more than the platform's maximum of 1,000 a page \(perPage=1000 was asked\); refused/);
  });

  it("gets one call by sessionId", async () => {
    const { url, requests } = await serve((req, res) =>
      req.url?.endsWith("/calls/a%2Fb") ? json(res, 200, { data: { sessionId: "a/b" } }) : json(res, 404, { error: { code: "NOT_FOUND", message: "no" } }),
    );
    expect(await client(url).getCall("a/b")).toEqual({ sessionId: "a/b" });
    await expect(client(url).getCall("zzz")).rejects.toMatchObject({ name: "PlatformNotFoundError", status: 404 });
    expect(requests[0].url).toBe("/v3/calls/a%2Fb");
  });
});

describe("token bucket", () => {
  it("never lets more than the budget through in a minute", () => {
    let now = 0;
    const b = new TokenBucket(600, 10, () => now);
    let taken = 0;
    for (now = 0; now < 60_000; now += 10) while (b.tryTake() === 0) taken++;
    expect(taken).toBeLessThanOrEqual(600);
    expect(taken).toBeGreaterThan(550);
    expect(new TokenBucket(600, 1, () => 0).tryTake()).toBe(0);
  });
});
