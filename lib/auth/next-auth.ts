import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { db } from "@/db";
import { clientAddress } from "./client-address";
import { verifyCredentials } from "./credentials";
import { ensureFirstAdmin } from "./first-admin";
import { authConfig } from "./next-auth-config";

/** Raised when the sign-in throttle refuses an attempt: `?error=CredentialsSignin&code=throttled`. */
export class ThrottledSignin extends CredentialsSignin {
  code = "throttled";
}

/**
 * next-auth v5 with a Credentials provider against the warehouse's users. Pages,
 * route handlers and actions do not read the session from here: they ask
 * lib/auth/authorize.ts (route handlers) or lib/auth/session.ts (pages, actions).
 */
export const { handlers, auth, signIn, signOut } = NextAuth({
  ...authConfig,
  providers: [
    Credentials({
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials, request) {
        const warehouse = db();
        await ensureFirstAdmin(warehouse);
        const outcome = await verifyCredentials(warehouse, {
          email: credentials.email,
          password: credentials.password,
          address: clientAddress(request.headers),
        });
        if (outcome.ok) {
          return { id: String(outcome.user.id), email: outcome.user.email, sessionEpoch: outcome.user.sessionEpoch };
        }
        if (outcome.reason === "throttled") throw new ThrottledSignin();
        return null;
      },
    }),
  ],
});
