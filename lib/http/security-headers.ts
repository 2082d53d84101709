/**
 * Security headers on every response: Next adds them from next.config.ts, the lean API
 * path (lib/server/api-fast-path.ts) from here, so both answer with the same set. No
 * nonces: 'unsafe-inline' scripts (Next's own inline bootstrap), never 'unsafe-eval'
 * outside development (React dev needs it).
 */
export function securityHeaders(isDev: boolean): Array<{ key: string; value: string }> {
  const contentSecurityPolicy = [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${isDev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return [
    { key: "Content-Security-Policy", value: contentSecurityPolicy },
    { key: "X-Content-Type-Options", value: "nosniff" },
    { key: "Referrer-Policy", value: "same-origin" },
    { key: "X-Frame-Options", value: "DENY" },
    { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
  ];
}
