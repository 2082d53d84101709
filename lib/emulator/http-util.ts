// Small node:http helpers shared by the platform and admin routes.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorBody, JsonValue } from "./types";

export function errorBody(code: string, message: string, devMessage = message): ErrorBody {
  return { error: { code, message, devMessage } };
}

export function sendText(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(typeof body === "string" ? Buffer.byteLength(body) : body.length),
    ...headers,
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string, devMessage?: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, errorBody(code, message, devMessage), headers);
}

export class BodyError extends Error {}

/** Path segments, percent-decoded; undefined when an escape is malformed (a client bug
 * that deserves a 400, not a crash). */
export function pathSegments(pathname: string): string[] | undefined {
  try {
    return pathname.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

/** Reads a JSON body (up to 1 MB). An empty body reads as {}. */
export async function readJson(req: IncomingMessage): Promise<JsonValue> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > 1_000_000) throw new BodyError("body larger than 1 MB");
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new BodyError("body is not valid JSON");
  }
}

export function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

const SECRET_HEADERS = new Set(["apikey", "key", "secret", "authorization", "cookie"]);

/** Request headers for the admin request log, with credentials replaced by a marker so
 * tests can check presence without the log ever holding a secret. */
export function loggableHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    out[k] = SECRET_HEADERS.has(k) ? "<redacted>" : Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

/** Appends UTF-8 text into one growing buffer. Joining a thousand record strings and
 * encoding the result costs about twice as much as encoding each one in place. */
export class ByteWriter {
  private buf: Buffer;
  private used = 0;

  constructor(initialBytes = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  write(text: string): void {
    const worst = this.used + text.length * 3;
    if (worst > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(worst, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.used);
      this.buf = next;
    }
    this.used += this.buf.write(text, this.used, "utf8");
  }

  writeBytes(bytes: Buffer): void {
    if (this.used + bytes.length > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.used + bytes.length, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.used);
      this.buf = next;
    }
    this.used += bytes.copy(this.buf, this.used);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }
}
