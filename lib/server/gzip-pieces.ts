import { constants, crc32, createDeflateRaw, type DeflateRaw } from "node:zlib";

/**
 * One gzip member (RFC 1952) made of pieces compressed independently and side by side on
 * libuv's threadpool, as pigz does (docs/decisions/0029-calls-csv-overlapping-threads.md):
 * each piece is a raw deflate stream ended by a sync flush, which leaves it on a byte
 * boundary with no final block, so pieces written one after another are one valid deflate
 * stream. The header goes before the first piece; an empty final block, the CRC-32 of all
 * the bytes given and their length (mod 2^32) end the member. Any gzip reader (curl,
 * browsers, Python, Node) inflates it as one ordinary member.
 *
 * Why not one `createGzip` stream: zlib then works in 16 KB output jobs one after
 * another, and each next job waits for the event loop of the thread that also makes the
 * CSV's batches; compression and making the next batch took turns instead of overlapping.
 * Each piece here is one threadpool job (its output buffer holds all of it), started as
 * soon as its batch is there. What a piece loses is the previous piece's 32 KB window: on
 * 0.5 MB batches of heavy-users' CSV, 0.3% more bytes.
 */

/** Header: magic, deflate, no flags, no mtime, XFL 4 (fastest, as zlib writes it for level 1), OS 3 (Unix). */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]);
/** A final block with no data (fixed Huffman, end-of-block code only): what zlib's Z_FINISH writes after a sync flush. */
const LAST_BLOCK = [0x03, 0x00];

/** Output buffer of a deflate stream: two or more pieces of a calls CSV batch (0.5 MB of text, 70–130 KB compressed). */
const CHUNK = 256 * 1024;

/**
 * A raw deflate stream that compresses one piece at a time, reset between pieces (each
 * piece starts with no window, so it does not depend on whatever this stream compressed
 * last). Reused rather than made per piece: a new stream is ~270 KB of zlib state, and
 * its own output buffer; the pieces' output here are slices of one buffer after another.
 */
class PieceDeflater {
  private readonly z: DeflateRaw;
  private parts: Buffer[] = [];

  constructor(level: number) {
    // Every write ends in a sync flush: a piece is one threadpool job (two if it overflows the output buffer), not a write and then a flush.
    this.z = createDeflateRaw({ level, chunkSize: CHUNK, flush: constants.Z_SYNC_FLUSH });
    this.z.on("data", (d: Buffer) => this.parts.push(d));
  }

  /** `bytes` as raw deflate ending in a sync flush (one or more slices, in order). */
  compress(bytes: Uint8Array): Promise<Buffer[]> {
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => reject(err);
      this.z.once("error", fail);
      // The write's callback runs after its output was pushed (and so given to "data").
      this.z.write(bytes, () => {
        this.z.off("error", fail);
        const out = this.parts;
        this.parts = [];
        this.z.reset();
        resolve(out);
      });
    });
  }

  close(): void {
    this.z.close();
  }
}

export class GzipPieces {
  private crc = 0;
  private length = 0;
  private headerSent = false;
  /** Deflaters not in use; at most `jobs` exist, and pieces wait for one (first come, first served). */
  private readonly idle: PieceDeflater[] = [];
  private made = 0;
  private readonly waiting: Array<(d: PieceDeflater) => void> = [];
  private closed = false;

  /**
   * `jobs`: pieces compressed at once, at most (libuv's threadpool has 4 threads). Each
   * piece needs this thread's event loop once to start and once to finish, and this
   * thread is busy 5–10 ms at a time writing its own batches: with 2 at once, compressing
   * fell behind making the batches (the 8 MB ahead filled up); with 4 it keeps up.
   */
  constructor(
    private readonly level: number,
    private readonly jobs = 4,
  ) {}

  /**
   * `bytes` compressed as the member's next piece (after the header, for the first): call
   * in stream order; the compression runs off this thread, pieces side by side, and the
   * caller writes the pieces in the order it asked for them. `bytes` must stay unchanged
   * until the promise settles.
   */
  async piece(bytes: Uint8Array): Promise<Buffer[]> {
    // Not for no bytes: zlib's crc32 of a null pointer is 0, not the CRC so far, and an empty view's data pointer can be null (Node 20).
    if (bytes.length > 0) this.crc = crc32(bytes, this.crc);
    this.length = (this.length + bytes.length) >>> 0;
    const header = this.headerSent ? [] : [HEADER];
    this.headerSent = true;
    const deflater = await this.deflater();
    try {
      return [...header, ...(await deflater.compress(bytes))];
    } finally {
      const next = this.waiting.shift();
      if (next) next(deflater);
      else if (this.closed) deflater.close();
      else this.idle.push(deflater);
    }
  }

  private deflater(): Promise<PieceDeflater> {
    const d = this.idle.pop();
    if (d) return Promise.resolve(d);
    if (this.made < this.jobs) {
      this.made++;
      return Promise.resolve(new PieceDeflater(this.level));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The end of the member (with the header first if no piece was made: an empty body is a valid member too); frees the deflaters. */
  end(): Buffer {
    this.close();
    const tail = Buffer.alloc(10);
    tail.set(LAST_BLOCK, 0);
    tail.writeUInt32LE(this.crc >>> 0, 2);
    tail.writeUInt32LE(this.length, 6);
    if (this.headerSent) return tail;
    this.headerSent = true;
    return Buffer.concat([HEADER, tail]);
  }

  /** Frees the deflaters (the export ended or was cancelled); pieces still being compressed finish first. */
  close(): void {
    this.closed = true;
    for (const d of this.idle.splice(0)) d.close();
  }
}
