import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { constants, gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createApiFastPath } from "./api-fast-path";
import { streamAhead, type StreamAheadOptions } from "./stream-ahead";

/**
 * The lean path's CSV writer (docs/decisions/0029): the body is read ahead of the socket,
 * but never more than its budget; the client's bytes are the body's, plain or gzip; the
 * first batch goes out before the next is made; a client that leaves cancels the body.
 */

/** A body of `count` batches of `size` bytes (random: gzip cannot shrink what the kernel holds), counting what was pulled. */
function source(count: number, size: number, gate?: (k: number) => Promise<void>) {
  const state = { pulled: 0, bytes: 0, cancelled: false, batches: [] as Buffer[] };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(c) {
        if (state.pulled === count) return c.close();
        await gate?.(state.pulled);
        const b = randomBytes(size);
        state.batches.push(b);
        state.pulled++;
        state.bytes += size;
        c.enqueue(b);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 1 },
  );
  return { body, state };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

async function serve(makeBody: () => ReadableStream<Uint8Array>, options: StreamAheadOptions): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/csv", ...(options.gzipLevel !== undefined ? { "content-encoding": "gzip" } : {}) });
    void streamAhead(res, makeBody(), options).catch((e: unknown) => res.destroy(e as Error));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => httpRequest(url, resolve).on("error", reject).end());
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  res.on("data", (d: Buffer) => parts.push(d));
  return new Promise((resolve, reject) => {
    res.on("end", () => resolve(Buffer.concat(parts)));
    res.on("error", reject);
  });
}

/** Waits until `value()` has not changed for a while (the server has done what it will do). */
async function settled(value: () => number): Promise<number> {
  let last = -1;
  let still = 0;
  for (let i = 0; i < 400 && still < 6; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const v = value();
    still = v === last ? still + 1 : 0;
    last = v;
  }
  return last;
}

describe("streamAhead", () => {
  for (const gzipLevel of [undefined, 1]) {
    const how = gzipLevel === undefined ? "plain" : "gzip";

    it(`sends the body's bytes, in order (${how}; no batch, one, many)`, async () => {
      for (const [count, size] of [[0, 0], [1, 10], [40, 100_000]]) {
        const { body, state } = source(count, size);
        const res = await get(await serve(() => body, { gzipLevel, budget: 1 << 20 }));
        const got = await readAll(res);
        const plain = gzipLevel === undefined ? got : gunzipSync(got);
        expect(plain.equals(Buffer.concat(state.batches)), `${count} batches`).toBe(true);
      }
    });

    it(`reads no more than its budget ahead of a client that does not read (${how})`, async () => {
      const budget = 1 << 20;
      const size = 128 * 1024;
      const count = 2048; // 256 MB in all
      const { body, state } = source(count, size);
      const res = await get(await serve(() => body, { gzipLevel, budget }));
      res.pause();
      const pulled = await settled(() => state.bytes);
      // The budget, plus what the kernel's socket buffers and the paused client hold.
      expect(pulled).toBeLessThan(budget + 48 * 1024 * 1024);
      expect(pulled).toBeLessThan(count * size);
      // Reading again, the client gets everything.
      const got = await readAll((res.resume(), res));
      const plain = gzipLevel === undefined ? got : gunzipSync(got);
      expect(plain.length).toBe(count * size);
      expect(plain.equals(Buffer.concat(state.batches))).toBe(true);
    }, 60_000);

    it(`sends the first batch before the next one is made (${how})`, async () => {
      let release!: () => void;
      const second = new Promise<void>((r) => (release = r));
      const { body, state } = source(3, 1000, (k) => (k === 1 ? second : Promise.resolve()));
      const res = await get(await serve(() => body, { gzipLevel }));
      const received: Buffer[] = [];
      res.on("data", (d: Buffer) => received.push(d));
      const all = readAll(res);
      // All of the first batch arrives while the second is still being made (a sync flush ends each gzip piece).
      const decoded = () => {
        const got = Buffer.concat(received);
        return gzipLevel === undefined || got.length < 10 ? got : gunzipSync(got, { finishFlush: constants.Z_SYNC_FLUSH });
      };
      for (let i = 0; i < 400 && decoded().length < 1000; i++) await new Promise((r) => setTimeout(r, 25));
      expect(decoded().equals(state.batches[0])).toBe(true);
      expect(state.pulled).toBe(1);
      release();
      const got = await all;
      expect((gzipLevel === undefined ? got : gunzipSync(got)).equals(Buffer.concat(state.batches))).toBe(true);
    });

    it(`ends the response unfinished when the body fails part way (${how})`, async () => {
      const { body, state } = source(10, 100_000, async (k) => {
        if (k === 3) throw new Error("the export failed");
      });
      const url = await serve(() => body, { gzipLevel });
      // Cut before or after the headers went out; either way never a response that looks whole (chunked: it has no last chunk).
      const outcome = await get(url).then(
        (res) =>
          new Promise<string>((resolve) => {
            res.on("data", () => undefined);
            res.on("end", () => resolve(res.complete ? "complete" : "cut"));
            res.on("error", () => resolve("cut"));
            res.on("aborted", () => resolve("cut"));
          }),
        () => "cut",
      );
      expect(outcome).toBe("cut");
      expect(state.pulled).toBe(3);
    });

    it(`stops reading the body when the client goes away (${how})`, async () => {
      const { body, state } = source(100_000, 64 * 1024);
      const res = await get(await serve(() => body, { gzipLevel, budget: 1 << 20 }));
      await new Promise((resolve) => res.once("data", resolve));
      res.destroy();
      await settled(() => state.bytes);
      expect(state.cancelled).toBe(true);
      expect(state.pulled).toBeLessThan(1000);
    });
  }
});

describe("the lean path's CSV answer", () => {
  it("reads a large export ahead of a slow client within the default budget", async () => {
    const { body, state } = source(4096, 64 * 1024); // 256 MB
    const api = createApiFastPath({
      report: async () => new Response(body, { headers: { "content-type": "text/csv; charset=utf-8" } }),
      health: () => new Response("{}"),
    });
    const server = createServer((req, res) => void (api(req, res) || res.writeHead(404).end()));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/calls?format=csv`;
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      httpRequest(url, { headers: { authorization: "Bearer cb_test", "accept-encoding": "gzip" } }, resolve).on("error", reject).end(),
    );
    expect(res.headers["content-encoding"]).toBe("gzip");
    res.pause();
    const pulled = await settled(() => state.bytes);
    expect(pulled).toBeLessThan(64 * 1024 * 1024);
    res.destroy();
    await settled(() => state.bytes);
    expect(state.cancelled).toBe(true);
  }, 60_000);
});
