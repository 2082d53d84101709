const CRLF = Buffer.from("\r\n");

/**
 * Records of a CSV (RFC 4180: each ends in CRLF; a line break inside a quoted cell is a
 * bare LF) counted chunk by chunk. The search is Buffer's native `indexOf`, one call a
 * record: 0.08 µs a row of this process's CPU on heavy-users' 261-byte rows, where
 * counting byte by byte in JS took 0.31 µs, on the same two cores as the server it
 * measures (session 10).
 */
export class CrlfCounter {
  count = 0;
  private lastWasCr = false;

  add(chunk: Uint8Array): void {
    const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (b.length === 0) return;
    // A CRLF split across two chunks.
    if (this.lastWasCr && b[0] === 10) this.count++;
    for (let i = b.indexOf(CRLF); i !== -1; i = b.indexOf(CRLF, i + 2)) this.count++;
    this.lastWasCr = b[b.length - 1] === 13;
  }
}
