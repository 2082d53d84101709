import NextAuth from "next-auth";
import { NextResponse } from "next/server";
import { authConfig, SIGN_IN_PATH } from "@/lib/auth/next-auth-config";
import { isOpenPath } from "@/lib/auth/open-paths";
import { cookieWriteRefusal, hasBearerToken } from "@/lib/auth/same-origin";
import { withBasePath } from "@/lib/http/base-path";
import { publicOrigin } from "@/lib/http/public-origin";
import { REQUEST_ID_HEADER } from "@/lib/http/request-id";

/**
 * First gate (Next 16's middleware): unsigned page requests go to the sign-in page,
 * unsigned API requests get 401, and writes signed in by cookie (route handlers and
 * server actions) from another site get 403 (lib/auth/same-origin.ts). It only reads
 * the session cookie (and renews it); the real decision — user still enabled, role,
 * grants — is lib/auth/authorize.ts, which every page and route calls itself. Open
 * doors: sign-in, next-auth's own routes (its CSRF token guards their POSTs), health,
 * webhook ingest (Basic auth per app), static assets.
 */
const { auth } = NextAuth(authConfig);

const NO_STORE = { "Cache-Control": "no-store" };

const isApi = (pathname: string) => pathname === "/api" || pathname.startsWith("/api/");

/** The server's request id (lib/server/observe.ts) in an error body, as every error body has it. */
const withRequestId = (headers: Headers, error: { code: string; message: string }) => {
  const requestId = headers.get(REQUEST_ID_HEADER);
  return requestId ? { ...error, requestId } : error;
};

export default auth((request) => {
  const { pathname, search } = request.nextUrl;
  if (isOpenPath(pathname)) return NextResponse.next();

  if (request.auth) {
    const refusal = cookieWriteRefusal(request, { jsonBody: isApi(pathname) });
    if (!refusal) return NextResponse.next();
    return NextResponse.json({ error: withRequestId(request.headers, { code: refusal.code, message: refusal.message }) }, { status: refusal.status, headers: NO_STORE });
  }

  if (isApi(pathname)) {
    // Scripts: the route handler checks the token.
    if (hasBearerToken(request.headers)) return NextResponse.next();
    return NextResponse.json(
      { error: withRequestId(request.headers, { code: "unauthorized", message: "Sign in or send Authorization: Bearer <token>." }) },
      { status: 401, headers: NO_STORE },
    );
  }

  // To the configured address or the host the browser asked: Next's own request URL says
  // `localhost` whatever the host, when served by lib/server/start.ts.
  // The callback stays an app path (without BASE_PATH): the sign-in page's redirect() adds it.
  const target = new URL(withBasePath(SIGN_IN_PATH), publicOrigin(request.headers) ?? request.nextUrl.origin);
  if (pathname !== "/") target.searchParams.set("callbackUrl", pathname + search);
  return NextResponse.redirect(target);
});

export const config = {
  // Everything but build assets (those are public and carry no data).
  matcher: ["/((?!_next/static|_next/image|favicon.ico|icon.svg|robots.txt).*)"],
};
