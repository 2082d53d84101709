/**
 * Alert rules: create, change, remove (admins, audited here so no caller can forget
 * it), and the views that are safe to send to a browser. A viewer sees a rule only when
 * every app it watches is granted to them; a rule over every app is an admin's.
 */
import { desc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { alertRules, type AlertRuleRow } from "@/db/schema";
import { listApps } from "@/lib/apps/registry";
import { audit, auditSync } from "@/lib/auth/audit";
import { requireAdmin, type Caller } from "@/lib/auth/authorize";
import { decryptSecret, encryptSecret } from "@/lib/crypto/secrets";
import { badRequest, notFound } from "@/lib/http/errors";
import { assertDestinationAllowed, describeDestinationUrl, systemResolver, type Resolver } from "./destination";
import {
  alertFiltersSchema, conditionSchema, describeCondition, describeWindow, METRICS, ruleSchema, rulePatchSchema,
  type AlertCondition, type AlertFilters, type AlertState, type Metric, type Rule,
} from "./schema";
import { newSigningSecret } from "./signing";

/** A rule's definition and state, as both the stored record and the view carry them. */
interface RuleBasics {
  id: number;
  name: string;
  enabled: boolean;
  metric: Metric;
  filters: AlertFilters;
  windowSeconds: number;
  condition: AlertCondition;
  minCalls: number;
  state: AlertState;
  stateSinceMs: number;
}

/** A stored rule with its JSON columns checked. */
export interface RuleRecord extends RuleBasics {
  lastWindowTo: number | null;
  version: number;
  row: AlertRuleRow;
}

export function decodeRule(row: AlertRuleRow): RuleRecord {
  return {
    id: row.pk,
    name: row.name,
    enabled: row.enabled,
    metric: ruleSchema.shape.metric.parse(row.metric),
    filters: alertFiltersSchema.parse(row.filters),
    windowSeconds: row.windowSeconds,
    condition: conditionSchema.parse(row.condition),
    minCalls: row.minCalls,
    state: row.state,
    stateSinceMs: row.stateSinceMs,
    lastWindowTo: row.lastWindowTo,
    version: row.version,
    row,
  };
}

/** The destination as stored (decrypted): for the sender only, never for a view. */
export function destinationOf(row: AlertRuleRow): { url: string; secret: string; allowPrivate: boolean } | null {
  if (!row.destinationUrlEnc || !row.destinationSecretEnc) return null;
  return { url: decryptSecret(row.destinationUrlEnc), secret: decryptSecret(row.destinationSecretEnc), allowPrivate: row.destinationAllowPrivate };
}

/** Safe for any browser the rule is visible to. */
export interface RuleView extends RuleBasics {
  /** "Unanswered rate above 20% over 5 minutes". */
  summary: string;
  lastEvaluation: { windowFrom: number; windowTo: number; atMs: number; value: number | null; previousValue: number | null; calls: number | null; note: string | null } | null;
  hasDestination: boolean;
  /** Admins only: where notifications go (origin and the URL's last four characters), never the secret. */
  destination: { origin: string; hint: string; allowPrivate: boolean } | null;
  createdMs: number;
  updatedMs: number;
}

export function summarize(r: Pick<RuleRecord, "metric" | "condition" | "windowSeconds">): string {
  return `${METRICS[r.metric].label} ${describeCondition(r.metric, r.condition)} over ${describeWindow(r.windowSeconds)}`;
}

function toView(r: RuleRecord, caller: Caller): RuleView {
  const row = r.row;
  let destination: RuleView["destination"] = null;
  if (caller.role === "admin" && row.destinationUrlEnc) {
    try {
      destination = { ...describeDestinationUrl(decryptSecret(row.destinationUrlEnc)), allowPrivate: row.destinationAllowPrivate };
    } catch {
      destination = { origin: "(unreadable: re-enter it)", hint: "", allowPrivate: row.destinationAllowPrivate };
    }
  }
  return {
    id: r.id, name: r.name, enabled: r.enabled, metric: r.metric, filters: r.filters, windowSeconds: r.windowSeconds,
    condition: r.condition, minCalls: r.minCalls, summary: summarize(r), state: r.state, stateSinceMs: r.stateSinceMs,
    lastEvaluation:
      row.lastWindowTo === null || row.lastEvaluatedMs === null
        ? null
        : {
            windowFrom: row.lastWindowTo - r.windowSeconds, windowTo: row.lastWindowTo, atMs: row.lastEvaluatedMs,
            value: row.lastValue, previousValue: row.lastPreviousValue, calls: row.lastCalls, note: row.lastNote,
          },
    hasDestination: row.destinationUrlEnc !== null,
    destination,
    createdMs: row.createdMs, updatedMs: row.updatedMs,
  };
}

/** Whether the caller may see the rule: admins always; viewers when every app it names is theirs. */
export function ruleVisibleTo(r: Pick<RuleRecord, "filters">, caller: Caller, appPkById: Map<string, number>): boolean {
  if (caller.appPks === "all") return true;
  const appIds = r.filters.app ?? [];
  if (appIds.length === 0) return false;
  const granted = caller.appPks;
  return appIds.every((id) => {
    const pk = appPkById.get(id);
    return pk !== undefined && granted.includes(pk);
  });
}

function appIndex(db: Db): Map<string, number> {
  return new Map(listApps(db).map((a) => [a.appId, a.pk]));
}

/**
 * The apps a list is narrowed to (`?app=`), each registered and visible to the caller —
 * else 404, the same answer as for an app that does not exist (as every report route).
 */
export function checkAppsVisible(db: Db, caller: Caller, appIds: readonly string[]): void {
  const apps = appIndex(db);
  for (const id of appIds) {
    const pk = apps.get(id);
    if (pk === undefined || (caller.appPks !== "all" && !caller.appPks.includes(pk))) throw notFound(`app "${id}" not found`);
  }
}

/** A rule concerns an app when it watches it by name or watches every app. */
function ruleConcerns(r: Pick<RuleRecord, "filters">, appIds: readonly string[]): boolean {
  const watched = r.filters.app ?? [];
  return watched.length === 0 || watched.some((id) => appIds.includes(id));
}

/** Every rule the caller may see, newest first; with `appIds`, only the rules that concern one of them. */
export function listRuleRecords(db: Db, caller: Caller, appIds?: readonly string[]): RuleRecord[] {
  const apps = appIndex(db);
  return db
    .select()
    .from(alertRules)
    .orderBy(desc(alertRules.pk))
    .all()
    .map(decodeRule)
    .filter((r) => ruleVisibleTo(r, caller, apps) && (appIds === undefined || ruleConcerns(r, appIds)));
}

export function listRules(db: Db, caller: Caller, appIds?: readonly string[]): RuleView[] {
  return listRuleRecords(db, caller, appIds).map((r) => toView(r, caller));
}

/** One rule, or 404 — the same answer for a rule that does not exist and one the caller may not see. */
export function getRuleRecord(db: Db, caller: Caller, id: number): RuleRecord {
  const row = db.select().from(alertRules).where(eq(alertRules.pk, id)).get();
  const r = row ? decodeRule(row) : null;
  if (!r || !ruleVisibleTo(r, caller, appIndex(db))) throw notFound(`alert rule ${id} not found`);
  return r;
}

export function getRule(db: Db, caller: Caller, id: number): RuleView {
  return toView(getRuleRecord(db, caller, id), caller);
}

export interface RuleOptions {
  /** DNS for the destination check (tests inject one). */
  resolver?: Resolver;
  nowMs?: number;
}

function assertAppsRegistered(db: Db, filters: AlertFilters): void {
  const apps = appIndex(db);
  for (const id of filters.app ?? []) {
    if (!apps.has(id)) throw badRequest(`filters.app: app "${id}" is not registered`, { parameter: "filters.app" });
  }
}

/** The columns of a rule's definition (everything but its destination and evaluation state). */
function definitionColumns(rule: Rule) {
  return {
    name: rule.name, enabled: rule.enabled, metric: rule.metric, filters: rule.filters as Record<string, unknown>,
    windowSeconds: rule.windowSeconds, condition: rule.condition as Record<string, unknown>, minCalls: rule.minCalls,
  };
}

/** What an audit entry says about a rule: its definition and where it notifies, never the URL's path or the secret. */
function auditDetails(rule: Rule): Record<string, unknown> {
  return {
    name: rule.name, enabled: rule.enabled, metric: rule.metric, filters: rule.filters, windowSeconds: rule.windowSeconds,
    condition: rule.condition, minCalls: rule.minCalls,
    destination: rule.destination ? { origin: describeDestinationUrl(rule.destination.url).origin, allowPrivate: rule.destination.allowPrivate } : null,
  };
}

/** Creates a rule. `secret` is the destination's signing secret, returned this once only. */
export async function createRule(db: Db, caller: Caller, input: unknown, options: RuleOptions = {}): Promise<{ rule: RuleView; secret: string | null }> {
  requireAdmin(caller);
  const rule = ruleSchema.parse(input);
  assertAppsRegistered(db, rule.filters);
  if (rule.destination) await assertDestinationAllowed(rule.destination.url, rule.destination.allowPrivate, options.resolver ?? systemResolver);
  const now = options.nowMs ?? Date.now();
  const secret = rule.destination ? newSigningSecret() : null;
  const row = db
    .insert(alertRules)
    .values({
      ...definitionColumns(rule),
      destinationUrlEnc: rule.destination ? encryptSecret(rule.destination.url) : null,
      destinationSecretEnc: secret ? encryptSecret(secret) : null,
      destinationAllowPrivate: rule.destination?.allowPrivate ?? false,
      state: "ok", stateSinceMs: now, createdByPk: caller.userId, createdMs: now, updatedMs: now,
    })
    .returning()
    .get();
  await audit(db, caller, "alert.create", `alert ${row.pk}`, auditDetails(rule));
  return { rule: toView(decodeRule(row), caller), secret };
}

/** Changes any field; a new destination or `rotateSecret` makes a new secret, returned this once. */
export async function updateRule(db: Db, caller: Caller, id: number, input: unknown, options: RuleOptions = {}): Promise<{ rule: RuleView; secret: string | null }> {
  requireAdmin(caller);
  const patch = rulePatchSchema.parse(input);
  const current = getRuleRecord(db, caller, id);
  const stored = destinationOf(current.row);
  const { rotateSecret, ...fields } = patch;
  const merged = ruleSchema.parse({
    name: current.name, enabled: current.enabled, metric: current.metric, filters: current.filters, windowSeconds: current.windowSeconds,
    condition: current.condition, minCalls: current.minCalls, destination: stored ? { url: stored.url, allowPrivate: stored.allowPrivate } : null,
    ...fields,
  });
  assertAppsRegistered(db, merged.filters);
  if (patch.destination) await assertDestinationAllowed(patch.destination.url, patch.destination.allowPrivate, options.resolver ?? systemResolver);
  if (rotateSecret && !merged.destination) throw badRequest("rotateSecret: the rule has no destination", { parameter: "rotateSecret" });
  // A destination keeps its secret when only its URL changes: receivers keep verifying.
  const secret = merged.destination && (rotateSecret || !stored) ? newSigningSecret() : null;
  const now = options.nowMs ?? Date.now();
  const row = db
    .update(alertRules)
    .set({
      ...definitionColumns(merged),
      destinationUrlEnc: merged.destination ? encryptSecret(merged.destination.url) : null,
      destinationSecretEnc: !merged.destination ? null : secret ? encryptSecret(secret) : current.row.destinationSecretEnc,
      destinationAllowPrivate: merged.destination?.allowPrivate ?? false,
      version: current.version + 1,
      updatedMs: now,
    })
    .where(eq(alertRules.pk, id))
    .returning()
    .get();
  await audit(db, caller, "alert.update", `alert ${id}`, { ...auditDetails(merged), changed: Object.keys(patch), secretRotated: secret !== null });
  return { rule: toView(decodeRule(row), caller), secret };
}

/** Removes a rule with its history and pending notifications (the audit log keeps the removal). */
export function deleteRule(db: Db, caller: Caller, id: number): RuleView {
  requireAdmin(caller);
  const current = getRuleRecord(db, caller, id);
  db.delete(alertRules).where(eq(alertRules.pk, id)).run();
  auditSync(db, caller, "alert.remove", `alert ${id}`, { name: current.name, metric: current.metric });
  return toView(current, caller);
}
