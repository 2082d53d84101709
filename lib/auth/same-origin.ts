import { isJsonContentType } from "@/lib/http/content-type";
import { HttpError } from "@/lib/http/errors";
import { ownHosts } from "@/lib/http/public-origin";

/**
 * Writes signed in by the session cookie must come from Callboard's own pages.
 *
 * SameSite=Lax keeps the cookie off cross-site POSTs, but a sibling subdomain is the
 * same site, and a form there could POST `text/plain` JSON to /api/v1/users with the
 * admin's cookie. So every state-changing request that a cookie authenticates (route
 * handlers and server actions alike) needs an Origin — or, without one, a Referer —
 * naming this server (lib/http/public-origin.ts), and a body for a JSON route must be
 * `application/json`, which no plain HTML form can send. Bearer-token requests carry
 * no ambient credential and are not affected. See docs/decisions/0009-hostile-clients.md.
 */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

interface RequestLike {
  method: string;
  headers: Pick<Headers, "get">;
}

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

export function hasBearerToken(headers: Pick<Headers, "get">): boolean {
  return /^bearer\s/i.test(headers.get("authorization") ?? "");
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

const crossSite = (message: string) => new HttpError(403, "cross_site_request", message);

/**
 * Why a cookie-authenticated request may not change anything (403 or 415), or null.
 * `jsonBody`: the route reads a JSON body (the /api routes; server actions post forms).
 */
export function cookieWriteRefusal(request: RequestLike, options: { jsonBody: boolean }): HttpError | null {
  if (!isStateChanging(request.method) || hasBearerToken(request.headers)) return null;
  const own = ownHosts(request.headers);
  const origin = request.headers.get("origin");
  if (origin !== null) {
    const host = origin === "null" ? null : hostOf(origin);
    if (host === null || !own.has(host)) {
      return crossSite(`This request comes from another site (Origin ${origin.slice(0, 100)}): changes signed in by cookie must come from Callboard's own pages. Scripts send Authorization: Bearer <token>.`);
    }
  } else {
    const referer = request.headers.get("referer");
    if (referer === null) {
      return crossSite("A change signed in by cookie needs an Origin or Referer header naming this server. Scripts send Authorization: Bearer <token>.");
    }
    const host = hostOf(referer);
    if (host === null || !own.has(host)) {
      return crossSite("This request comes from another site (Referer): changes signed in by cookie must come from Callboard's own pages.");
    }
  }
  if (options.jsonBody && hasBody(request.headers) && !isJsonContentType(request.headers.get("content-type"))) {
    return new HttpError(415, "unsupported_media_type", "Send the body as Content-Type: application/json (UTF-8).");
  }
  return null;
}

function hasBody(headers: Pick<Headers, "get">): boolean {
  const length = headers.get("content-length");
  if (length !== null) return Number(length) > 0;
  return headers.get("transfer-encoding") !== null;
}
