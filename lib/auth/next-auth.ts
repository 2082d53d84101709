import { Auth, setEnvDefaults } from "@auth/core";
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import type { Provider } from "next-auth/providers";
import { db } from "@/db";
import { env } from "@/lib/config/env";
import { configuredOrigin, requestOrigin } from "@/lib/http/public-origin";
import { logger } from "@/lib/log/logger";
import { clientAddress } from "./client-address";
import { verifyCredentials } from "./credentials";
import { endSession } from "./ended-sessions";
import { ensureFirstAdmin } from "./first-admin";
import { AUTH_BASE_PATH, authConfig } from "./next-auth-config";
import { localPasswordsEnabled, logRefusedOidc, OIDC_PROVIDER_ID, oidcSettings, userForOidcClaims } from "./oidc";

/** Raised when the sign-in throttle refuses an attempt: `?error=CredentialsSignin&code=throttled`. */
export class ThrottledSignin extends CredentialsSignin {
  code = "throttled";
}

/**
 * next-auth v5 with a Credentials provider against the warehouse's users. Pages,
 * route handlers and actions do not read the session from here: they ask
 * lib/auth/authorize.ts (route handlers) or lib/auth/session.ts (pages, actions).
 */
/** OIDC_* set: next-auth's OpenID Connect provider; the user is Callboard's (lib/auth/oidc.ts). */
function oidcProviders(): Provider[] {
  const settings = oidcSettings();
  if (!settings) return [];
  return [
    {
      id: OIDC_PROVIDER_ID,
      name: "Single sign-on",
      type: "oidc",
      issuer: settings.issuer,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      authorization: { params: { scope: "openid email profile" } },
      async profile(claims: Record<string, unknown>) {
        const outcome = await userForOidcClaims(db(), claims, settings);
        if (!outcome.ok) {
          logRefusedOidc(claims.email, outcome.reason);
          return { id: "", refused: true };
        }
        return { userId: String(outcome.userId), email: outcome.email, sessionEpoch: outcome.sessionEpoch };
      },
    },
  ];
}

function credentialsProviders(): Provider[] {
  if (!localPasswordsEnabled()) return [];
  return [
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
  ];
}

const config: Omit<NextAuthConfig, "providers"> = {
  ...authConfig,
  callbacks: {
    ...authConfig.callbacks,
    // A provider's user that Callboard refused (lib/auth/oidc.ts) ends at the sign-in page with ?error=AccessDenied.
    signIn({ user }) {
      return !(user as { refused?: boolean }).refused;
    },
  },
  events: {
    // Every way of signing out — the dashboard's button (a server action) and
    // POST /api/auth/signout — ends the sign-in for good: the JWT itself stays valid
    // until it expires, so a copy of the cookie must not outlive the sign-out.
    async signOut(message) {
      const sid = "token" in message ? message.token?.sid : undefined;
      if (typeof sid !== "string" || sid === "") return;
      try {
        await endSession(db(), sid);
      } catch (error) {
        logger.error({ err: error instanceof Error ? error.message : String(error) }, "sign-out could not end the session");
      }
    },
  },
};

/**
 * The providers, from the environment: single sign-on when OIDC_* are set, passwords
 * unless LOCAL_PASSWORDS=off. Read on first use, not at import (`next build` loads this
 * module without a configured environment).
 */
let fullConfigCache: NextAuthConfig | undefined;
function fullConfig(): NextAuthConfig {
  fullConfigCache ??= { ...config, providers: [...oidcProviders(), ...credentialsProviders()] };
  return fullConfigCache;
}

export const { auth, signIn, signOut } = NextAuth(() => fullConfig());

/**
 * next-auth's defaults for its HTTP routes (what NextAuth() applies to its own handlers).
 * Built on the first request, not at import: `next build` loads this module without a
 * configured AUTH_SECRET, and a missing secret must fail a request, not the build.
 */
let httpConfigCache: NextAuthConfig | undefined;
function httpConfig(): NextAuthConfig {
  if (!httpConfigCache) {
    const built: NextAuthConfig = { ...fullConfig(), basePath: AUTH_BASE_PATH, secret: env().AUTH_SECRET };
    setEnvDefaults(process.env, built, true);
    httpConfigCache = built;
  }
  return httpConfigCache;
}

/**
 * GET and POST /api/auth/*: next-auth's own handlers take the request's URL from
 * Next, which names `localhost` whatever host was asked (and rewrites 127.0.0.1 to
 * localhost even in AUTH_URL), so sign-in and callbackUrl redirects went to a host
 * where the session cookie is not sent. These run Auth.js on the same request at the
 * public origin: AUTH_URL / CALLBOARD_PUBLIC_URL, else the request's own host.
 */
export async function authHttpHandler(request: Request): Promise<Response> {
  const origin = configuredOrigin() ?? requestOrigin(request.headers);
  const asked = new URL(request.url);
  const url = origin ? `${origin}${asked.pathname}${asked.search}` : request.url;
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  return Auth(new Request(url, { method: request.method, headers: request.headers, body }), httpConfig());
}
