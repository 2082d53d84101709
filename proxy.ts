import NextAuth from "next-auth";
import { NextResponse } from "next/server";
import { authConfig, SIGN_IN_PATH } from "@/lib/auth/next-auth-config";

/**
 * First gate (Next 16's middleware): unsigned page requests go to the sign-in page,
 * unsigned API requests get 401. It only reads the session cookie (and renews it);
 * the real decision — user still enabled, role, grants — is lib/auth/authorize.ts,
 * which every page and route calls itself. Open doors: sign-in, next-auth's own
 * routes, health, webhook ingest (Basic auth per app), static assets.
 */
const { auth } = NextAuth(authConfig);

const OPEN_PREFIXES = ["/api/auth/", "/api/webhooks/", "/_next/"];
const OPEN_PATHS = new Set([SIGN_IN_PATH, "/api/health", "/favicon.ico", "/robots.txt"]);

export function isOpenPath(pathname: string): boolean {
  if (OPEN_PATHS.has(pathname)) return true;
  return OPEN_PREFIXES.some((p) => pathname.startsWith(p));
}

export default auth((request) => {
  const { pathname, search } = request.nextUrl;
  if (isOpenPath(pathname) || request.auth) return NextResponse.next();

  if (pathname === "/api" || pathname.startsWith("/api/")) {
    // Scripts: the route handler checks the token.
    if (/^bearer\s/i.test(request.headers.get("authorization") ?? "")) return NextResponse.next();
    return NextResponse.json(
      { error: { code: "unauthorized", message: "Sign in or send Authorization: Bearer <token>." } },
      { status: 401, headers: { "Cache-Control": "no-store" } },
    );
  }

  const target = new URL(SIGN_IN_PATH, request.nextUrl.origin);
  if (pathname !== "/") target.searchParams.set("callbackUrl", pathname + search);
  return NextResponse.redirect(target);
});

export const config = {
  // Everything but build assets (those are public and carry no data).
  matcher: ["/((?!_next/static|_next/image|favicon.ico|robots.txt).*)"],
};
