import { db } from "@/db";
import { HttpError, toErrorResponse } from "@/lib/http/errors";
import { clientAddress } from "./client-address";
import { checkThrottle, throttleMessage } from "./throttle";

/**
 * For POST /api/auth/callback/credentials: a 429 `{error: {code: "too_many_attempts"}}`
 * with Retry-After while throttled, else null (let next-auth handle the request).
 */
export async function signInThrottleResponse(request: Request): Promise<Response | null> {
  if (!new URL(request.url).pathname.endsWith("/callback/credentials")) return null;
  let email = "";
  try {
    const form = await request.clone().formData();
    const value = form.get("email");
    email = typeof value === "string" ? value : "";
  } catch {
    return null; // next-auth answers malformed bodies itself
  }
  const state = await checkThrottle(db(), { email, address: clientAddress(request.headers) });
  if (!state.limited) return null;
  return toErrorResponse(
    new HttpError(429, "too_many_attempts", throttleMessage(state), { retryAfterSeconds: state.retryAfterSeconds }, {
      "Retry-After": String(state.retryAfterSeconds),
    }),
  );
}
