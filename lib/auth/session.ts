import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { db as warehouse } from "@/db";
import { forbidden, unauthorized } from "@/lib/http/errors";
import { callerForSession, type Caller } from "./authorize";
import { ensureFirstAdmin } from "./first-admin";
import { SIGN_IN_PATH } from "./next-auth-config";
import { readSessionClaims } from "./session-token";

/**
 * The authorization point for server components and server actions (route handlers
 * use `authorize(request)`): the session cookie of the current request, checked
 * against the warehouse exactly like `authorize` does.
 */
export async function optionalCaller(): Promise<Caller | null> {
  // Headers first: it marks the page dynamic before anything touches the warehouse.
  const requestHeaders = await headers();
  const db = warehouse();
  await ensureFirstAdmin(db);
  const claims = await readSessionClaims(requestHeaders);
  return claims ? await callerForSession(db, claims) : null;
}

/** Pages: the signed-in caller, or a redirect to the sign-in page. */
export async function currentCaller(): Promise<Caller> {
  const caller = await optionalCaller();
  if (!caller) redirect(SIGN_IN_PATH);
  return caller;
}

/** Admin pages: a viewer gets the same 404 as for a page that does not exist. */
export async function currentAdmin(): Promise<Caller> {
  const caller = await currentCaller();
  if (caller.role !== "admin") notFound();
  return caller;
}

/** Server actions: throws HttpError 401 (no session) — actions turn it into a message. */
export async function actionCaller(): Promise<Caller> {
  const caller = await optionalCaller();
  if (!caller) throw unauthorized("Your session has ended: sign in again.");
  return caller;
}

/** Server actions that only admins may run: 401 or 403. */
export async function actionAdmin(): Promise<Caller> {
  const caller = await actionCaller();
  if (caller.role !== "admin") throw forbidden();
  return caller;
}
