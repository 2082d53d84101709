import type { ServerResponse } from "node:http";
import { recycleCsvBatch } from "@/lib/export/csv-bytes";
import { GzipPieces } from "./gzip-pieces";

/**
 * A streamed body (the calls CSV's batches) written to a response ahead of the socket,
 * within a memory budget (docs/decisions/0029-calls-csv-overlapping-threads.md). The
 * next batches are asked for while the socket still sends earlier ones, and with gzip
 * each batch is compressed on libuv's threadpool as soon as it is there, so that making
 * batches (this thread and the analytics worker), compressing them and sending them
 * overlap instead of taking turns.
 *
 * Backpressure holds: at most `budget` bytes of the body (counted before compression) are
 * read and not yet taken by the socket; beyond that the body is not read, so the export
 * goes at the client's pace. A client that goes away cancels the body at once.
 */

/**
 * Bytes of the body read ahead of the socket, at most: about 8 batches of the calls CSV,
 * enough to cover this thread's turns at writing its own batch (5–10 ms each) and the
 * analytics worker's batches arriving in bursts; more would keep more batch buffers alive
 * than csv-bytes.ts keeps for reuse.
 */
export const AHEAD_BYTES = 4 << 20;

export interface StreamAheadOptions {
  /** Compress as one gzip member at this level (undefined: as it is). */
  gzipLevel?: number;
  budget?: number;
}

export async function streamAhead(res: ServerResponse, body: ReadableStream<Uint8Array>, { gzipLevel, budget = AHEAD_BYTES }: StreamAheadOptions = {}): Promise<void> {
  const zip = gzipLevel === undefined ? undefined : new GzipPieces(gzipLevel);
  const reader = body.getReader();
  /** Body bytes read whose output the socket has not taken yet. */
  let held = 0;
  let stopped = false;
  let wake: (() => void) | undefined;
  const wakeReader = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  /** The client went away, or a piece could not be compressed: the body's source stops now. */
  const stop = () => {
    if (stopped) return;
    stopped = true;
    void reader.cancel().catch(() => undefined);
    wakeReader();
  };
  res.once("close", stop);
  /** Every write so far, in order; rejects with the first failure (a piece that could not be compressed). */
  let written: Promise<void> = Promise.resolve();
  const send = (out: Uint8Array[] | Promise<Uint8Array[]>, size: number, sent: () => void) => {
    if (out instanceof Promise) out.catch(() => undefined); // awaited below, in order; never an unhandled rejection
    written = written.then(async () => {
      const parts = await out;
      if (stopped) return;
      // The callback of the last part: the socket has taken all of them.
      parts.forEach((bytes, i) =>
        res.write(bytes, i < parts.length - 1 ? undefined : () => {
          held -= size;
          sent();
          wakeReader();
        }),
      );
    });
    written.catch(stop);
  };
  try {
    for (;;) {
      while (held >= budget && !stopped) await new Promise<void>((resolve) => (wake = resolve));
      if (stopped) break;
      const { done, value } = await reader.read();
      if (done || stopped) break;
      held += value.length;
      if (zip) {
        // The batch's buffer may be written again (csv-bytes.ts) once zlib has read it; the compressed piece is zlib's own.
        const piece = zip.piece(value);
        void piece.then(() => recycleCsvBatch(value), () => undefined);
        send(piece, value.length, () => undefined);
      } else send([value], value.length, () => recycleCsvBatch(value));
    }
    await written;
  } catch (err) {
    // The export failed part way (the caller destroys the response): nothing more is written.
    stop();
    throw err;
  } finally {
    res.off("close", stop);
    zip?.close(); // its deflaters; end() below still writes the member's end
  }
  if (!stopped) res.end(zip?.end());
}
