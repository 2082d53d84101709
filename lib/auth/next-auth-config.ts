import type { NextAuthConfig } from "next-auth";
import { BUILD_BASE_PATH, withBasePath } from "@/lib/http/base-path";
import { logger } from "@/lib/log/logger";

/**
 * The part of the next-auth configuration that needs no database: shared by the full
 * configuration (lib/auth/next-auth.ts) and by proxy.ts, which only reads and renews
 * session cookies. JWT sessions: `sub` is the user id, `epoch` the user's session
 * epoch at sign-in, `sid` the sign-in's own id (see ended_sessions); the user itself is
 * re-read on every authorization.
 */
export const SIGN_IN_PATH = "/signin";

/** Session lifetime: a sign-in lasts at most this long without activity (renewed on use). */
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

/** next-auth's own routes, under BASE_PATH when Callboard is served under one. */
export const AUTH_BASE_PATH = `${BUILD_BASE_PATH}/api/auth`;

/**
 * Under BASE_PATH the session and callback cookies are scoped to it (another app on the
 * same host does not get them). The CSRF cookie keeps `/`: over HTTPS it is a `__Host-`
 * cookie, which browsers refuse with any other path.
 */
const cookiePaths = BUILD_BASE_PATH ? { sessionToken: { options: { path: BUILD_BASE_PATH } }, callbackUrl: { options: { path: BUILD_BASE_PATH } } } : undefined;

export const authConfig = {
  basePath: AUTH_BASE_PATH,
  // next-auth uses these as they are: they are URLs, not app paths, so they carry the base path.
  pages: { signIn: withBasePath(SIGN_IN_PATH), error: withBasePath(SIGN_IN_PATH) },
  ...(cookiePaths ? { cookies: cookiePaths as NonNullable<NextAuthConfig["cookies"]> } : {}),
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS, updateAge: 15 * 60 },
  providers: [],
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        const u = user as { id?: string; userId?: string; email?: string | null; sessionEpoch?: number };
        // `sid` names this sign-in across renewals, so signing out can end it for good. An OAuth
        // user's `id` is a random one next-auth sets: single sign-on names Callboard's user in `userId`.
        return { sub: u.userId ?? u.id, email: u.email ?? undefined, epoch: u.sessionEpoch ?? 0, sid: crypto.randomUUID() };
      }
      return token;
    },
    session({ session, token }) {
      return { ...session, user: { ...session.user, id: token.sub ?? "" } };
    },
  },
  logger: {
    // A wrong password is not an error worth a stack trace; never log the payloads.
    error(error: Error) {
      // `type`, not `name`: class names are minified in the production bundle.
      const type = (error as Error & { type?: string }).type ?? error.name;
      if (type === "CredentialsSignin") return;
      logger.warn({ err: { type, message: error.message } }, "auth error");
    },
    warn(code: string) {
      logger.debug({ code }, "auth warning");
    },
    debug() {},
  },
} satisfies NextAuthConfig;
