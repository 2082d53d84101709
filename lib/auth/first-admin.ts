import type { Db } from "@/db/client";
import { env } from "@/lib/config/env";
import { HttpError } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { audit } from "./audit";
import { countUsers, createUser } from "./users";

export type FirstAdminResult = "exists" | "created" | "unconfigured";

const settled = new WeakSet<Db>();

/**
 * Creates the first admin from CALLBOARD_ADMIN_EMAIL / CALLBOARD_ADMIN_PASSWORD when
 * the users table is empty. Idempotent and safe to race (a second creator finds the
 * email taken). Runs at server start and on the first authorization of a process.
 * Once any user exists, the variables are ignored: changing them later changes nothing.
 */
export async function ensureFirstAdmin(db: Db): Promise<FirstAdminResult> {
  if (settled.has(db)) return "exists";
  if ((await countUsers(db)) > 0) {
    settled.add(db);
    return "exists";
  }
  const { CALLBOARD_ADMIN_EMAIL: email, CALLBOARD_ADMIN_PASSWORD: password } = env();
  if (!email || !password) return "unconfigured";
  try {
    const user = await createUser(db, { email, password, role: "admin" });
    await audit(db, { email: "system" }, "user.create", user.email, { role: "admin", reason: "first admin from CALLBOARD_ADMIN_EMAIL" });
    logger.info({ email: user.email }, "first admin created");
    settled.add(db);
    return "created";
  } catch (error) {
    if (error instanceof HttpError && error.status === 409) {
      settled.add(db);
      return "exists";
    }
    throw error;
  }
}
