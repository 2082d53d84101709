import { SIGN_IN_PATH } from "./next-auth-config";

/**
 * The paths open without a session or token: sign-in, next-auth's own routes (its CSRF
 * token guards their POSTs), health, webhook ingest (Basic auth per app), static
 * assets. Shared by proxy.ts (Next's first gate) and the custom server's body gate
 * (lib/server/body-gate.ts), which answers before Next reads a body.
 */
const OPEN_PREFIXES = ["/api/auth/", "/api/webhooks/", "/_next/"];
const OPEN_PATHS = new Set([SIGN_IN_PATH, "/api/health", "/favicon.ico", "/icon.svg", "/robots.txt"]);

export function isOpenPath(pathname: string): boolean {
  if (OPEN_PATHS.has(pathname)) return true;
  return OPEN_PREFIXES.some((p) => pathname.startsWith(p));
}
