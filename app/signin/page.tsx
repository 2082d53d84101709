import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { safeCallbackUrl } from "@/lib/auth/callback-url";
import { optionalCaller } from "@/lib/auth/session";
import { localPasswordsEnabled, oidcSettings } from "@/lib/auth/oidc";
import { signInWithSsoAction } from "./actions";
import { SignInForm } from "./signin-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in" };

// next-auth's own HTTP flows come back here with ?error=…&code=….
const ERRORS: Record<string, string> = {
  throttled: "Too many failed sign-ins. Wait a few minutes and try again.",
  credentials: "Email or password is incorrect.",
  AccessDenied: "Single sign-on worked, but Callboard refused this account (disabled, or no verified email). Ask an admin.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const callbackUrl = safeCallbackUrl(first(params.callbackUrl));
  if (await optionalCaller()) redirect(callbackUrl);
  const error = first(params.error);
  const code = first(params.code);
  const message = error
    ? (ERRORS[code ?? ""] ?? (error === "CredentialsSignin" ? ERRORS.credentials : error === "AccessDenied" ? ERRORS.AccessDenied : "Sign-in failed. Try again."))
    : undefined;
  const sso = oidcSettings() !== undefined;
  const passwords = localPasswordsEnabled();

  return (
    <main id="main" tabIndex={-1} className="signin">
      <div className="card signin-card">
        <h1>Callboard</h1>
        <p className="muted">Sign in to see your call analytics.</p>
        {sso ? (
          <form action={signInWithSsoAction} className="stack">
            <input type="hidden" name="callbackUrl" value={callbackUrl} />
            <button type="submit" className="btn">Sign in with single sign-on</button>
          </form>
        ) : null}
        {passwords ? <SignInForm callbackUrl={callbackUrl} initialError={message} /> : message ? <p className="alert" role="alert">{message}</p> : null}
      </div>
    </main>
  );
}
