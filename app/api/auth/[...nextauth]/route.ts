import type { NextRequest } from "next/server";
import { handlers } from "@/lib/auth/next-auth";
import { signInThrottleResponse } from "@/lib/auth/signin-throttle";

export const dynamic = "force-dynamic";

export const GET = handlers.GET;

/**
 * Credentials sign-in over HTTP answers 429 with a JSON error while the account or
 * the address is throttled; the provider itself re-checks, so this is about the answer.
 */
export async function POST(request: NextRequest): Promise<Response> {
  const throttled = await signInThrottleResponse(request);
  return throttled ?? handlers.POST(request);
}
