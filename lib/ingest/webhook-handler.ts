import type { IncomingMessage, ServerResponse } from "node:http";
import { REQUEST_ID_HEADER } from "@/lib/http/request-id";
import type { IngestApp, Ingestor, IngestResult } from "./ingest";
import { INGEST_PREFIX } from "./url";

/**
 * The lean ingest path: `POST /api/webhooks/{appId}` answered by node:http directly,
 * in front of Next.js in the same process and port (docs/decisions/0003-webhook-ingest.md).
 * Returns false for any other URL so the caller hands the request to Next.
 */
export { INGEST_PREFIX };
const DRAIN_LIMIT = 8 * 1024 * 1024;

/** The app id of an ingest URL; null for a URL under the prefix that is not one; undefined elsewhere. */
export function matchIngestPath(url: string | undefined): string | null | undefined {
  if (!url) return undefined;
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  if (path !== INGEST_PREFIX && !path.startsWith(`${INGEST_PREFIX}/`)) return undefined;
  const rest = path.slice(INGEST_PREFIX.length + 1).replace(/\/$/, "");
  if (rest === "" || rest.includes("/")) return null;
  try {
    return decodeURIComponent(rest);
  } catch {
    return null;
  }
}

/** An error body names the request (the id the server put in X-Request-Id), as every error body does. */
function bodyOf(res: ServerResponse, result: IngestResult): unknown {
  const requestId = res.getHeader(REQUEST_ID_HEADER);
  const body = result.body as { error?: Record<string, unknown> } | null;
  if (typeof requestId !== "string" || result.status < 400 || typeof body?.error !== "object") return result.body;
  return { ...body, error: { ...body.error, requestId } };
}

function send(res: ServerResponse, result: IngestResult, close = false): void {
  if (res.headersSent) return;
  const json = JSON.stringify(bodyOf(res, result));
  const headers: Record<string, string | number> = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(json),
    "Cache-Control": "no-store",
    ...result.headers,
  };
  if (close) headers.Connection = "close";
  res.writeHead(result.status, headers);
  res.end(json);
}

const NOT_FOUND: IngestResult = {
  status: 404,
  body: { error: { code: "not_found", message: "No webhook receiver at this address: POST to /api/webhooks/{appId}." } },
};

export function createIngestHttpHandler(ingestor: () => Ingestor): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const appId = matchIngestPath(req.url);
    if (appId === undefined) return false;
    const receivedMs = Date.now();
    // Stop swallowing a body nobody will read past a bound: close instead.
    const declared = Number(req.headers["content-length"] ?? 0);
    const closeAfter = declared > DRAIN_LIMIT;
    if (appId === null) {
      send(res, NOT_FOUND, closeAfter);
      return true;
    }
    const ing = ingestor();
    // The body waits (the request stream stays paused) until the app and its credentials are
    // checked; a client that goes away meanwhile must not crash the process.
    req.on("error", () => {});
    void ing
      .preflight(req.method ?? "GET", appId, {
        contentType: req.headers["content-type"],
        contentLength: req.headers["content-length"],
        authorization: req.headers.authorization,
      })
      .then((pre) => {
        if (!pre.ok) {
          send(res, pre.result, closeAfter || pre.result.status === 413);
          return;
        }
        receiveBody(req, res, ing, pre.app, receivedMs);
      });
    return true;
  };
}

/** Reads the body of a delivery that passed the preflight, up to the ingest's limit, and answers once it is stored. */
function receiveBody(req: IncomingMessage, res: ServerResponse, ing: Ingestor, app: IngestApp, receivedMs: number): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on("data", (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > ing.maxBodyBytes) {
      done = true;
      chunks.length = 0;
      send(res, ing.tooLarge(app), true);
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (done) return;
    done = true;
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    void ing.accept(app, body, receivedMs).then((result) => send(res, result));
  });
  req.on("error", () => {
    done = true;
  });
}
