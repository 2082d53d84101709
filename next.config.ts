import type { NextConfig } from "next";
import { securityHeaders } from "./lib/http/security-headers";

// Security headers on every response (the lean API path sends the same set).
const isDev = process.env.NODE_ENV === "development";

const nextConfig: NextConfig = {
  reactStrictMode: true,
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
