import { randomBytes } from "node:crypto";
import type { Db } from "@/db/client";
import { listApps } from "@/lib/apps/registry";
import { env } from "@/lib/config/env";
import { logger } from "@/lib/log/logger";
import { audit } from "./audit";
import { createUser, getUserByEmail, normalizeEmail } from "./users";

/**
 * Single sign-on with OpenID Connect (next-auth's OIDC provider): OIDC_ISSUER,
 * OIDC_CLIENT_ID, OIDC_CLIENT_SECRET. A person is matched to a Callboard user by a
 * verified email. The first sign-in creates the user: its role from the claim named by
 * OIDC_ROLE_CLAIM (`admin`, else viewer; viewer when unset), its apps from the claim
 * named by OIDC_APPS_CLAIM (a list or a comma-separated string of app ids; ids Callboard
 * does not know are left out). After that Callboard's own settings rule: an admin may
 * change the role or grants, and a disabled user stays refused whatever the provider says.
 * See docs/decisions/0038-single-sign-on.md.
 */
export const OIDC_PROVIDER_ID = "oidc";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  roleClaim?: string;
  appsClaim?: string;
}

export function oidcSettings(): OidcSettings | undefined {
  const e = env();
  if (!e.OIDC_ISSUER || !e.OIDC_CLIENT_ID || !e.OIDC_CLIENT_SECRET) return undefined;
  return { issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID, clientSecret: e.OIDC_CLIENT_SECRET, roleClaim: e.OIDC_ROLE_CLAIM, appsClaim: e.OIDC_APPS_CLAIM };
}

/** `LOCAL_PASSWORDS=off` leaves only single sign-on (the environment check requires OIDC then). */
export function localPasswordsEnabled(): boolean {
  return env().LOCAL_PASSWORDS !== "off";
}

type Claims = Record<string, unknown>;

/** A claim by name; a dotted name reads a nested object (`realm_access.roles`, as Keycloak nests them). */
function claim(claims: Claims, name: string | undefined): unknown {
  if (!name) return undefined;
  if (name in claims) return claims[name];
  return name.split(".").reduce<unknown>((v, key) => (v && typeof v === "object" ? (v as Claims)[key] : undefined), claims);
}

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return value.split(",").map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string").map((s) => s.trim()).filter(Boolean);
  return [];
}

/** `admin` when the claim is (or lists) `admin`; viewer otherwise, and when no claim is configured. */
export function roleFromClaims(claims: Claims, roleClaim: string | undefined): "admin" | "viewer" {
  return stringsOf(claim(claims, roleClaim)).some((v) => v.toLowerCase() === "admin") ? "admin" : "viewer";
}

export function appsFromClaims(claims: Claims, appsClaim: string | undefined): string[] {
  return stringsOf(claim(claims, appsClaim));
}

export type OidcSignIn = { ok: true; userId: number; email: string; sessionEpoch: number } | { ok: false; reason: string };

/** The Callboard user for a provider's claims: found by verified email, created on first sign-in, or refused. */
export async function userForOidcClaims(db: Db, claims: Claims, settings: Pick<OidcSettings, "roleClaim" | "appsClaim">): Promise<OidcSignIn> {
  const email = typeof claims.email === "string" ? normalizeEmail(claims.email) : "";
  if (!email) return { ok: false, reason: "the provider sent no email" };
  // An unverified email would let anyone who can set one at the provider become that Callboard user.
  if (claims.email_verified === false) return { ok: false, reason: "the provider has not verified this email" };
  let user = await getUserByEmail(db, email);
  if (!user) {
    const role = roleFromClaims(claims, settings.roleClaim);
    const known = new Set(listApps(db).map((a) => a.appId));
    const apps = role === "viewer" ? appsFromClaims(claims, settings.appsClaim).filter((id) => known.has(id)) : [];
    // No local password: a random one nobody knows (LOCAL_PASSWORDS may be on for others).
    const created = await createUser(db, { email, password: randomBytes(32).toString("base64url"), role, apps });
    await audit(db, { email: "sso" }, "user.create", `user ${created.id}`, { email, role, apps, via: "oidc" });
    user = (await getUserByEmail(db, email))!;
  }
  if (user.disabled) return { ok: false, reason: "the user is disabled in Callboard" };
  return { ok: true, userId: user.pk, email: user.email, sessionEpoch: user.sessionEpoch };
}

/** Logged without the claims themselves (they may hold personal data beyond the email). */
export function logRefusedOidc(email: unknown, reason: string): void {
  logger.warn({ email: typeof email === "string" ? email : undefined, reason }, "single sign-on refused");
}
