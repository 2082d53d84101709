import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CsvBytes, recycleCsvBatch, spareBuffer } from "@/lib/export/csv-bytes";
import { RAW_KIND } from "@/lib/export/csv";
import { createApiFastPath } from "./api-fast-path";

/**
 * The calls CSV's batch buffers are written again once sent (docs/decisions/0023): the
 * lean path hands each batch back after the socket (or gzip) took it, and nothing else
 * is reused. The bytes a client gets are the batches' own, whatever their buffers held.
 */

/** A batch of `n` lines written by CsvBytes (text that needs quoting, numbers, decimals). */
function batch(n: number, tag: string): Uint8Array {
  const w = new CsvBytes(n * 64);
  for (let i = 0; i < n; i++) {
    w.reserve(32);
    w.cell(`${tag}-${i}`, RAW_KIND.plain);
    w.comma();
    w.cell(i % 3 === 0 ? `a,"${i}"` : `=x${i}`, RAW_KIND.plain);
    w.comma();
    w.cell(i * 1.0005, RAW_KIND.decimal);
    w.comma();
    w.cell(i * 1_000_003, RAW_KIND.plain);
    w.crlf();
  }
  return w.bytes();
}

const drain = () => {
  while (spareBuffer(0)) {
    // empty the pool between cases
  }
};

describe("CsvBytes batch buffers", () => {
  it("writes a recycled batch's buffer again, and nothing that was not handed back", () => {
    drain();
    const first = batch(200, "a");
    const fresh = Buffer.from(batch(200, "b")); // a copy: the bytes a fresh buffer gives
    recycleCsvBatch(first);
    const again = batch(200, "b");
    expect(again.buffer).toBe(first.buffer);
    expect(Buffer.from(again).equals(fresh)).toBe(true);
    // Not handed back: a new buffer; a chunk not written by CsvBytes, or a part of one, is never kept.
    expect(batch(200, "c").buffer).not.toBe(again.buffer);
    recycleCsvBatch(new Uint8Array(1 << 16));
    recycleCsvBatch(again.subarray(1));
    expect(spareBuffer(0)).toBeUndefined();
    // Handed back twice (a consumer's mistake): kept once.
    recycleCsvBatch(again);
    recycleCsvBatch(again);
    expect(spareBuffer(0)).toBe(again.buffer);
    expect(spareBuffer(0)).toBeUndefined();
  });
});

describe("the lean path's CSV stream", () => {
  let server: Server;
  let sent: Uint8Array[] = [];
  let url = "";

  beforeAll(async () => {
    const api = createApiFastPath({
      report: async () => {
        sent = [batch(3000, "x"), batch(3000, "y"), batch(3000, "z")];
        const chunks = [...sent];
        const body = new ReadableStream<Uint8Array>({ pull: (c) => (chunks.length > 0 ? c.enqueue(chunks.shift()!) : c.close()) }, { highWaterMark: 1 });
        return new Response(body, { headers: { "content-type": "text/csv; charset=utf-8" } });
      },
      health: () => new Response("{}"),
    });
    server = createServer((req, res) => {
      if (!api(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/calls?format=csv`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** The whole body as the client got it (raw bytes; gunzipped when gzip was asked for). */
  const get = (encoding: string) =>
    new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest(url, { headers: { authorization: "Bearer cb_test", "accept-encoding": encoding } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () => resolve(res.headers["content-encoding"] === "gzip" ? gunzipSync(Buffer.concat(parts)) : Buffer.concat(parts)));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });

  for (const encoding of ["identity", "gzip"]) {
    it(`hands every batch back once sent (${encoding}), after the client got its bytes`, async () => {
      drain();
      const body = await get(encoding);
      const want = Buffer.concat(sent.map((b) => Buffer.from(b)));
      expect(body.equals(want)).toBe(true);
      const kept = new Set<ArrayBufferLike>();
      for (let b = spareBuffer(0); b; b = spareBuffer(0)) kept.add(b);
      expect(sent.every((b) => kept.has(b.buffer))).toBe(true);
    });
  }
});
