/** `npm start` (production build) and `npm run dev`: see lib/server/start.ts. */
import { loadDotEnv } from "@/lib/config/dotenv";
import { nodeVersionProblem } from "@/lib/server/node-version";

// Before anything that needs a newer Node loads: a clear refusal, not a crash mid-request.
const tooOld = nodeVersionProblem();
if (tooOld) {
  console.error(tooOld);
  process.exit(1);
}
loadDotEnv();
const dev = process.argv.includes("--dev");
(process.env as Record<string, string | undefined>).NODE_ENV ??= dev ? "development" : "production";

async function main(): Promise<void> {
  const { startServer } = await import("@/lib/server/start");
  const running = await startServer({ dev });
  const shutdown = () => {
    void running.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
