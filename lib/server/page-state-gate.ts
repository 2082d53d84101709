import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { securityHeaders } from "@/lib/http/security-headers";
import { isPostgresUnavailable, POSTGRES_RETRY_AFTER_SECONDS } from "@/lib/postgres/unavailable";

/**
 * Pages over Postgres (DATABASE_URL; docs/decisions/0035-state-in-postgres.md): a page
 * (a server component) that meets Postgres down throws inside Next's render, and Next
 * answers its own error page with 500 — there is no way for a server component to set
 * a 503 or a header. So in front of Next, each page request first asks the pool for a
 * connection (`SELECT 1`, a loopback round trip beside the page's own queries): when
 * Postgres cannot be reached, the page is answered here, 503 with Retry-After and a
 * short page that says so; otherwise Next renders it as usual. A Postgres that goes
 * away in the instant between the probe and the render still gives Next's error page.
 *
 * Only page navigations are probed: the lean paths, /api routes (their error mapper
 * answers 503 itself: lib/http/errors.ts) and Next's static files (/_next/) never wait.
 */
const HEADERS: Record<string, string> = Object.fromEntries(securityHeaders(false).map((h) => [h.key.toLowerCase(), h.value]));

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Callboard is unavailable</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem">
<h1>Callboard is unavailable for a moment</h1>
<p>Its database cannot be reached right now. Nothing is lost: reload this page in a few seconds.</p>
</body></html>
`;

function isPageRequest(req: IncomingMessage, path: string): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  return !(path === "/api" || path.startsWith("/api/") || path.startsWith("/_next/") || path === "/favicon.ico");
}

/** Answers 503 + Retry-After when Postgres is down (returns true), or calls nothing and returns false. */
export async function answerWhenStateDown(pool: pg.Pool, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  if (!isPageRequest(req, path)) return false;
  try {
    await pool.query("SELECT 1");
    return false;
  } catch (error) {
    if (!isPostgresUnavailable(error)) return false; // anything else is the page's to meet and report
    if (res.headersSent) return true;
    res.writeHead(503, {
      ...HEADERS,
      "content-type": "text/html; charset=utf-8",
      "content-length": Buffer.byteLength(PAGE),
      "cache-control": "no-store",
      "retry-after": String(POSTGRES_RETRY_AFTER_SECONDS),
    });
    res.end(req.method === "HEAD" ? undefined : PAGE);
    return true;
  }
}
