"use server";

import { AuthError } from "next-auth";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { db } from "@/db";
import { clientAddress } from "@/lib/auth/client-address";
import { signIn, signOut } from "@/lib/auth/next-auth";
import { safeCallbackUrl } from "@/lib/auth/callback-url";
import { checkThrottle, throttleMessage } from "@/lib/auth/throttle";

export interface SignInState {
  error?: string;
  email?: string;
}

export async function signInAction(_previous: SignInState, formData: FormData): Promise<SignInState> {
  const email = String(formData.get("email") ?? "").trim();
  const password = String(formData.get("password") ?? "");
  const callbackUrl = safeCallbackUrl(formData.get("callbackUrl"));
  if (!email || !password) return { error: "Enter your email and password.", email };
  try {
    await signIn("credentials", { email, password, redirect: false });
  } catch (error) {
    if (error instanceof AuthError && error.type === "CredentialsSignin") {
      if ((error as AuthError & { code?: string }).code === "throttled") {
        const state = checkThrottle(db(), { email, address: clientAddress(await headers()) });
        return { error: state.limited ? throttleMessage(state) : "Too many failed sign-ins. Try again later.", email };
      }
      return { error: "Email or password is incorrect.", email };
    }
    if (error instanceof AuthError) return { error: "Sign-in failed. Try again.", email };
    throw error;
  }
  redirect(callbackUrl);
}

/** Ends this sign-in for good (next-auth's signOut event, lib/auth/next-auth.ts), then clears the cookie. */
export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: "/signin" });
}
