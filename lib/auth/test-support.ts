/** Shared set-up of the lib/auth suites: a fresh warehouse file per suite. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Db } from "@/db/client";
import { calls } from "@/db/schema";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";

export const TEST_SECRET = "test-secret-for-callboard-auth-suites-0123456789";

export function useTestEnv(extra: Record<string, string | undefined> = {}): void {
  const vars: Record<string, string | undefined> = {
    NODE_ENV: "test",
    AUTH_SECRET: TEST_SECRET,
    CALLBOARD_ADMIN_EMAIL: "first-admin@example.com",
    CALLBOARD_ADMIN_PASSWORD: "first-admin-password",
    PLATFORM_MANAGEMENT_URL: undefined,
    PLATFORM_MANAGEMENT_KEY: undefined,
    PLATFORM_MANAGEMENT_SECRET: undefined,
    ...extra,
  };
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvForTests();
}

export function freshDb(): { db: Db; file: string; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-auth-"));
  const file = path.join(dir, "warehouse.db");
  const db = openDatabase(file);
  return {
    db,
    file,
    dispose() {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function seedApp(db: Db, appId: string, apiKey = `key-${appId}-SECRET`) {
  return addApp(db, { appId, name: `App ${appId}`, region: "eu", apiKey, webhookUsername: "hook", webhookPassword: `pw-${appId}-SECRET` });
}

export function seedCall(db: Db, appPk: number, sessionId: string): void {
  const now = Date.now();
  db.insert(calls).values({ appPk, sessionId, startAt: 1_700_000_000, firstSeenMs: now, updatedMs: now }).run();
}
