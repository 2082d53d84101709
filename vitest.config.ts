import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL("./", import.meta.url)) } },
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".next/**", "data/**", ".tmp/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration suites spawn emulator processes and open SQLite files; on two cores
    // more than two workers only adds contention.
    maxWorkers: 2,
  },
});
