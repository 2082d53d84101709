import { authHttpHandler } from "@/lib/auth/next-auth";
import { signInThrottleResponse } from "@/lib/auth/signin-throttle";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return authHttpHandler(request);
}

/**
 * Credentials sign-in over HTTP answers 429 with a JSON error while the account or
 * the address is throttled; the provider itself re-checks, so this is about the answer.
 */
export async function POST(request: Request): Promise<Response> {
  const throttled = await signInThrottleResponse(request);
  return throttled ?? authHttpHandler(request);
}
