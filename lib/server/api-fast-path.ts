import type { IncomingMessage, ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { REPORT_ROUTES } from "@/lib/analytics/report-registry";
import type { ReportName } from "@/lib/analytics/report-csv-writers";
import { securityHeaders } from "@/lib/http/security-headers";
import { streamAhead } from "./stream-ahead";

/**
 * The lean API path (docs/decisions/0016-lean-api-path.md): a script's GET of an
 * analytics report with `Authorization: Bearer` and no cookie, and `GET /api/health`,
 * answered by node:http in front of Next.js, in the same process and port — as the
 * webhook ingest is (0003). The answer is the one the Next route gives (the same
 * `handleReport` / `healthResponse` build it); what is skipped is Next's router, the
 * proxy (it only passes such requests on) and its web-stream plumbing, 5–7 ms of CPU a
 * request measured here. A browser (cookie) or any other request goes to Next.
 */

export interface ApiFastPathDeps {
  report: (request: Request, name: ReportName) => Promise<Response>;
  health: () => Response | Promise<Response>;
}

/** gzip level of the lean path: 1 is several times cheaper than the default 6 and still shrinks a CSV about 4-fold. */
const GZIP_LEVEL = 1;
/** Smaller bodies go as they are (the `compression` middleware under Next uses the same bound). */
const GZIP_MIN_BYTES = 1024;

// Lower-case keys: a header the answer sets too (X-Content-Type-Options on a CSV) replaces the default, not doubles it.
const HEADERS: Record<string, string> = Object.fromEntries(securityHeaders(false).map((h) => [h.key.toLowerCase(), h.value]));

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The report a request is for when the lean path may answer it; undefined: Next answers. */
export function fastPathRoute(req: Pick<IncomingMessage, "method" | "url" | "headers">): ReportName | "health" | undefined {
  if (req.method !== "GET" || !req.url) return undefined;
  const path = pathOf(req.url);
  if (path === "/api/health") return "health";
  const name = REPORT_ROUTES[path];
  if (!name) return undefined;
  // A cookie may carry a session Next's proxy would renew: such requests keep the full path.
  if (req.headers.cookie !== undefined) return undefined;
  const auth = req.headers.authorization;
  return auth !== undefined && /^bearer\s/i.test(auth) ? name : undefined;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const accept = req.headers["accept-encoding"];
  return typeof accept === "string" && /\bgzip\b/i.test(accept) && !/\bgzip\s*;\s*q=0(\.0*)?\b/i.test(accept);
}

function headersOf(response: Response, extra: Record<string, string | number>): Record<string, string | number> {
  const out: Record<string, string | number> = { ...HEADERS };
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  return Object.assign(out, extra);
}

/** The CSV's batches, written ahead of the socket within a budget, compressed side by side with gzip (stream-ahead.ts). */
async function writeStream(res: ServerResponse, response: Response, body: ReadableStream<Uint8Array>, gzip: boolean): Promise<void> {
  res.writeHead(response.status, headersOf(response, gzip ? { "content-encoding": "gzip", vary: "Accept-Encoding" } : {}));
  await streamAhead(res, body, { gzipLevel: gzip ? GZIP_LEVEL : undefined });
}

async function send(req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> {
  const gzip = acceptsGzip(req);
  const type = response.headers.get("content-type") ?? "";
  if (response.body && type.startsWith("text/csv")) return writeStream(res, response, response.body, gzip);
  const raw = Buffer.from(await response.arrayBuffer());
  const zipped = gzip && raw.length >= GZIP_MIN_BYTES;
  const body = zipped ? gzipSync(raw, { level: GZIP_LEVEL }) : raw;
  const extra: Record<string, string | number> = { "content-length": body.length };
  if (zipped) Object.assign(extra, { "content-encoding": "gzip", vary: "Accept-Encoding" });
  res.writeHead(response.status, headersOf(response, extra));
  res.end(body);
}

/** Returns false when the request is not the lean path's (the caller hands it to Next). */
export function createApiFastPath(deps: ApiFastPathDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const route = fastPathRoute(req);
    if (route === undefined) return false;
    if (route === "health") {
      void Promise.resolve(deps.health()).then((answer) => send(req, res, answer)).catch((err: unknown) => res.destroy(err instanceof Error ? err : undefined));
      return true;
    }
    // The request's signal: aborted when the client goes away before the answer is out.
    const abort = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    let request: Request;
    try {
      request = new Request(`http://localhost${req.url}`, { headers: { authorization: req.headers.authorization! }, signal: abort.signal });
    } catch {
      return false; // a URL the fetch standard refuses: Next answers it as it would anyway
    }
    void deps
      .report(request, route)
      .then((response) => send(req, res, response))
      .catch((err: unknown) => res.destroy(err instanceof Error ? err : undefined));
    return true;
  };
}
