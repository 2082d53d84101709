import { existsSync } from "node:fs";

/**
 * Reads `.env` (if present) for command-line tools and the custom server; Next.js
 * loads it itself. Kept apart from env.ts so the Next bundle does not trace the
 * whole project for a dynamic file read.
 */
export function loadDotEnv(file = ".env"): void {
  if (existsSync(file)) process.loadEnvFile(file);
}
