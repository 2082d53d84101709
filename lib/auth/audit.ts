import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditLog as auditLogTable, type AuditRow } from "@/db/schema";
import { tablesOf } from "@/db/state";
import { logger } from "@/lib/log/logger";
import type { Caller } from "./caller";

/**
 * The audit log of admin actions: who changed which app, user or token, and when.
 * Call `audit()` after the change succeeded. Details are for people; never put a
 * secret in them — keys that look like one are replaced anyway, as a second line of
 * defence.
 */

/** A signed-in caller, or a command-line / system actor such as `cli` or `system`. */
export type AuditActor = Caller | { userId?: number | null; email: string };

/** Action names in use: `<object>.<verb>`. Others may add theirs (e.g. `app.sync`). */
export type AuditAction =
  | "user.create"
  | "user.update"
  | "user.remove"
  | "token.create"
  | "token.revoke"
  | "app.create"
  | "app.create_tenant"
  | "app.update"
  | "app.remove"
  | "app.sync"
  | (string & {});

const SECRETISH = /pass|secret|token|apikey|api_key|key$|hash|authorization|cookie/i;

export function scrubDetails(value: unknown, depth = 0): unknown {
  if (depth > 5) return "[truncated]";
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrubDetails(v, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRETISH.test(k) && typeof v !== "boolean" ? "[redacted]" : scrubDetails(v, depth + 1);
    }
    return out;
  }
  if (typeof value === "string" && value.length > 500) return `${value.slice(0, 500)}…`;
  return value;
}

function auditRow(actor: AuditActor, action: AuditAction, target: string | null, details?: Record<string, unknown>) {
  const actorUserPk = "userId" in actor ? (actor.userId ?? null) : null;
  const scrubbed = details === undefined ? null : (scrubDetails(details) as Record<string, unknown>);
  return { atMs: Date.now(), actorUserPk, actorEmail: actor.email, action, target, details: scrubbed };
}

export async function audit(
  db: Db,
  actor: AuditActor,
  action: AuditAction,
  target: string | null,
  details?: Record<string, unknown>,
): Promise<void> {
  const { auditLog } = tablesOf(db);
  await db.insert(auditLog).values(auditRow(actor, action, target, details));
  logger.debug({ audit: action, actor: actor.email, target }, "audit");
}

/**
 * `audit` for the modules that still speak SQLite synchronously and audit inside their
 * own SQLite transaction (alert rules, price sheets, statements, preferences, saved
 * views): they move to `audit` when they move to Postgres
 * (docs/decisions/0035-state-in-postgres.md, decision 5).
 */
export function auditSync(
  db: Db,
  actor: AuditActor,
  action: AuditAction,
  target: string | null,
  details?: Record<string, unknown>,
): void {
  db.insert(auditLogTable).values(auditRow(actor, action, target, details)).run();
  logger.debug({ audit: action, actor: actor.email, target }, "audit");
}

export interface AuditEntry {
  id: number;
  atMs: number;
  actor: string;
  actorUserId: number | null;
  action: string;
  target: string | null;
  details: Record<string, unknown> | null;
}

function toEntry(r: AuditRow): AuditEntry {
  return { id: r.pk, atMs: r.atMs, actor: r.actorEmail, actorUserId: r.actorUserPk, action: r.action, target: r.target, details: r.details };
}

/** Newest first; page with `before` (the last id seen). */
export async function listAudit(db: Db, options: { limit?: number; before?: number; action?: string } = {}): Promise<AuditEntry[]> {
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 1000);
  const { auditLog } = tablesOf(db);
  const conditions: SQL[] = [];
  if (options.before !== undefined) conditions.push(lt(auditLog.pk, options.before));
  if (options.action !== undefined) conditions.push(eq(auditLog.action, options.action));
  const rows = await db
    .select()
    .from(auditLog)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(auditLog.pk))
    .limit(limit);
  return rows.map(toEntry);
}
