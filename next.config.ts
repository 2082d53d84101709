import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native and server-only packages stay out of the bundle.
  serverExternalPackages: ["better-sqlite3", "@node-rs/argon2", "pino"],
  typedRoutes: false,
};

export default nextConfig;
