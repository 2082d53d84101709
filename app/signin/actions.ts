"use server";

import { AuthError } from "next-auth";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { db } from "@/db";
import { clientAddress } from "@/lib/auth/client-address";
import { signIn, signOut } from "@/lib/auth/next-auth";
import { safeCallbackUrl } from "@/lib/auth/callback-url";
import { SIGN_IN_PATH } from "@/lib/auth/next-auth-config";
import { localPasswordsEnabled, OIDC_PROVIDER_ID } from "@/lib/auth/oidc";
import { withBasePath } from "@/lib/http/base-path";
import { checkThrottle, throttleMessage } from "@/lib/auth/throttle";

export interface SignInState {
  error?: string;
  email?: string;
}

export async function signInAction(_previous: SignInState, formData: FormData): Promise<SignInState> {
  const email = String(formData.get("email") ?? "").trim();
  const password = String(formData.get("password") ?? "");
  const callbackUrl = safeCallbackUrl(formData.get("callbackUrl"));
  if (!localPasswordsEnabled()) return { error: "Password sign-in is turned off here: use single sign-on." };
  if (!email || !password) return { error: "Enter your email and password.", email };
  try {
    await signIn("credentials", { email, password, redirect: false });
  } catch (error) {
    if (error instanceof AuthError && error.type === "CredentialsSignin") {
      if ((error as AuthError & { code?: string }).code === "throttled") {
        const state = await checkThrottle(db(), { email, address: clientAddress(await headers()) });
        return { error: state.limited ? throttleMessage(state) : "Too many failed sign-ins. Try again later.", email };
      }
      return { error: "Email or password is incorrect.", email };
    }
    if (error instanceof AuthError) return { error: "Sign-in failed. Try again.", email };
    throw error;
  }
  redirect(callbackUrl);
}

/** To the OpenID Connect provider; it sends the browser back to next-auth's callback, then to `callbackUrl`. */
export async function signInWithSsoAction(formData: FormData): Promise<void> {
  const callbackUrl = safeCallbackUrl(formData.get("callbackUrl"));
  // A URL for next-auth (it makes it absolute), so it carries the base path itself.
  await signIn(OIDC_PROVIDER_ID, { redirectTo: withBasePath(callbackUrl) });
}

/** Ends this sign-in for good (next-auth's signOut event, lib/auth/next-auth.ts), then clears the cookie. */
export async function signOutAction(): Promise<void> {
  // A URL, not an app path: next-auth makes it absolute, so Next would not add the base path.
  await signOut({ redirectTo: withBasePath(SIGN_IN_PATH) });
}
