/**
 * Where to go after signing in: only a path on this site (`/…`, never `//host` or
 * `/\host`, which browsers read as another host), never back to the sign-in page.
 */
export function safeCallbackUrl(value: unknown): string {
  if (typeof value !== "string" || value.length > 2000) return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f]/.test(value)) return "/";
  if (value === "/signin" || value.startsWith("/signin?") || value.startsWith("/api/auth")) return "/";
  return value;
}
