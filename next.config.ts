import type { NextConfig } from "next";
import { normaliseBasePath } from "./lib/http/base-path";
import { securityHeaders } from "./lib/http/security-headers";

// Security headers on every response (the lean API path sends the same set).
const isDev = process.env.NODE_ENV === "development";
// BASE_PATH is fixed at build (Next's basePath); `npm start` checks it against the build (lib/server/build-info.ts).
const basePath = normaliseBasePath(process.env.BASE_PATH);

const nextConfig: NextConfig = {
  reactStrictMode: true,
  basePath: basePath || undefined,
  // What the browser's own fetch() calls and next-auth's settings prefix (lib/http/base-path.ts).
  env: { NEXT_PUBLIC_BASE_PATH: basePath },
  // Where the build goes and `npm start` reads it; another folder lets a test build a second variant beside .next.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  poweredByHeader: false,
  // Native and server-only packages stay out of the bundle.
  serverExternalPackages: ["better-sqlite3", "@node-rs/argon2", "pino", "prom-client"],
  // `npm run typecheck` checks the whole project once, before the build; the build
  // does not repeat it (it would double the slowest step of CI on two cores).
  typescript: { ignoreBuildErrors: true },
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders(isDev) }];
  },
};

export default nextConfig;
