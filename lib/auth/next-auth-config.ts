import type { NextAuthConfig } from "next-auth";
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

export const authConfig = {
  pages: { signIn: SIGN_IN_PATH, error: SIGN_IN_PATH },
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS, updateAge: 15 * 60 },
  providers: [],
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        const u = user as { id?: string; email?: string | null; sessionEpoch?: number };
        // `sid` names this sign-in across renewals, so signing out can end it for good.
        return { sub: u.id, email: u.email ?? undefined, epoch: u.sessionEpoch ?? 0, sid: crypto.randomUUID() };
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
