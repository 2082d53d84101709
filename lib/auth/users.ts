import { and, asc, eq, inArray, ne, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { apps, userAppGrants, users, type UserRow } from "@/db/schema";
import { HttpError, badRequest, notFound } from "@/lib/http/errors";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, hashPassword } from "./passwords";

/**
 * Users, roles and app grants. Emails are the sign-in name and are compared
 * lower-cased. Grants are given and shown by the platform's app id; they are stored
 * by app pk so that removing an app removes its grants.
 */

export const ROLES = ["admin", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email("email must be a valid address").max(254));

export const passwordSchema = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `password must be at most ${MAX_PASSWORD_LENGTH} characters`);

const roleSchema = z.enum(ROLES, { error: "role must be admin or viewer" });
const appIdsSchema = z.array(z.string().trim().min(1)).max(1000);

export const createUserSchema = z.object({
  email: emailSchema,
  password: passwordSchema,
  role: roleSchema.default("viewer"),
  apps: appIdsSchema.default([]),
  disabled: z.boolean().default(false),
});
export type CreateUserInput = z.input<typeof createUserSchema>;

export const updateUserSchema = z.object({
  email: emailSchema.optional(),
  password: passwordSchema.optional(),
  role: roleSchema.optional(),
  apps: appIdsSchema.optional(),
  disabled: z.boolean().optional(),
});
export type UpdateUserInput = z.input<typeof updateUserSchema>;

/** Safe to show anywhere: no hash. */
export interface UserView {
  id: number;
  email: string;
  role: Role;
  disabled: boolean;
  /** Granted app ids (meaningful for viewers; admins see every app). */
  apps: string[];
  createdMs: number;
  updatedMs: number;
}

export const conflict = (message: string) => new HttpError(409, "conflict", message);

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const r = schema.safeParse(input);
  if (!r.success) {
    const first = r.error.issues[0];
    throw badRequest(r.error.issues.map((i) => i.message).join("; "), { parameter: first?.path.join(".") || "request" });
  }
  return r.data;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function getUserByEmail(db: Db, email: string): UserRow | undefined {
  return db.select().from(users).where(eq(users.email, normalizeEmail(email))).get();
}

export function getUserByPk(db: Db, pk: number): UserRow | undefined {
  return db.select().from(users).where(eq(users.pk, pk)).get();
}

export function countUsers(db: Db): number {
  return db.get<{ n: number }>(sql`SELECT COUNT(*) AS n FROM users`).n;
}

/** App pks granted to a user (apps that still exist: grants cascade with the app). */
export function grantedAppPks(db: Db, userPk: number): number[] {
  return db
    .select({ appPk: userAppGrants.appPk })
    .from(userAppGrants)
    .where(eq(userAppGrants.userPk, userPk))
    .orderBy(asc(userAppGrants.appPk))
    .all()
    .map((r) => r.appPk);
}

function appPksFor(db: Db, appIds: string[]): number[] {
  const unique = [...new Set(appIds)];
  if (unique.length === 0) return [];
  const rows = db.select({ pk: apps.pk, appId: apps.appId }).from(apps).where(inArray(apps.appId, unique)).all();
  const missing = unique.filter((id) => !rows.some((r) => r.appId === id));
  if (missing.length > 0) throw badRequest(`unknown app${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`, { parameter: "apps" });
  return rows.map((r) => r.pk);
}

function toView(db: Db, row: UserRow): UserView {
  const granted = db
    .select({ appId: apps.appId })
    .from(userAppGrants)
    .innerJoin(apps, eq(apps.pk, userAppGrants.appPk))
    .where(eq(userAppGrants.userPk, row.pk))
    .orderBy(asc(apps.appId))
    .all()
    .map((r) => r.appId);
  return {
    id: row.pk,
    email: row.email,
    role: row.role,
    disabled: row.disabled,
    apps: granted,
    createdMs: row.createdMs,
    updatedMs: row.updatedMs,
  };
}

export function listUsers(db: Db): UserView[] {
  return db.select().from(users).orderBy(asc(users.email)).all().map((r) => toView(db, r));
}

export function getUserView(db: Db, pk: number): UserView | undefined {
  const row = getUserByPk(db, pk);
  return row ? toView(db, row) : undefined;
}

function otherActiveAdmins(db: Db, exceptPk: number): number {
  return db
    .select({ n: sql<number>`COUNT(*)` })
    .from(users)
    .where(and(eq(users.role, "admin"), eq(users.disabled, false), ne(users.pk, exceptPk)))
    .get()!.n;
}

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

function setGrants(db: Db | Tx, userPk: number, appPks: number[]): void {
  db.delete(userAppGrants).where(eq(userAppGrants.userPk, userPk)).run();
  if (appPks.length > 0) db.insert(userAppGrants).values(appPks.map((appPk) => ({ userPk, appPk }))).run();
}

export async function createUser(db: Db, input: CreateUserInput): Promise<UserView> {
  const v = parse(createUserSchema, input);
  if (getUserByEmail(db, v.email)) throw conflict(`a user with email ${v.email} already exists`);
  const appPks = appPksFor(db, v.apps);
  const passwordHash = await hashPassword(v.password);
  const now = Date.now();
  const row = db.transaction((tx) => {
    const created = tx
      .insert(users)
      .values({ email: v.email, passwordHash, role: v.role, disabled: v.disabled, createdMs: now, updatedMs: now })
      .returning()
      .get();
    setGrants(tx, created.pk, appPks);
    return created;
  });
  return toView(db, row);
}

/** Finds a user by pk or email, or answers 404. */
export function resolveUser(db: Db, who: number | string): UserRow {
  const row = typeof who === "number" ? getUserByPk(db, who) : getUserByEmail(db, who);
  if (!row) throw notFound(typeof who === "number" ? `no user with id ${who}` : `no user with email ${normalizeEmail(who)}`);
  return row;
}

/**
 * Changes a user. A password change or a disable ends the user's current sessions
 * (the session epoch moves on). The last enabled admin cannot be demoted or disabled.
 */
export async function updateUser(db: Db, who: number | string, input: UpdateUserInput): Promise<UserView> {
  const v = parse(updateUserSchema, input);
  const existing = resolveUser(db, who);
  if (v.email !== undefined && v.email !== existing.email && getUserByEmail(db, v.email)) {
    throw conflict(`a user with email ${v.email} already exists`);
  }
  const losesAdmin = existing.role === "admin" && !existing.disabled && (v.role === "viewer" || v.disabled === true);
  if (losesAdmin && otherActiveAdmins(db, existing.pk) === 0) {
    throw conflict("this is the last enabled admin: add or enable another admin first");
  }
  const appPks = v.apps === undefined ? undefined : appPksFor(db, v.apps);
  const patch: Partial<UserRow> = { updatedMs: Date.now() };
  let endSessions = false;
  if (v.email !== undefined) patch.email = v.email;
  if (v.role !== undefined) patch.role = v.role;
  if (v.disabled !== undefined) {
    patch.disabled = v.disabled;
    if (v.disabled && !existing.disabled) endSessions = true;
  }
  if (v.password !== undefined) {
    patch.passwordHash = await hashPassword(v.password);
    endSessions = true;
  }
  if (endSessions) patch.sessionEpoch = existing.sessionEpoch + 1;
  db.transaction((tx) => {
    tx.update(users).set(patch).where(eq(users.pk, existing.pk)).run();
    if (appPks !== undefined) setGrants(tx, existing.pk, appPks);
  });
  return toView(db, resolveUser(db, existing.pk));
}

/** Removes a user with their grants and tokens. The last enabled admin stays. */
export function removeUser(db: Db, who: number | string): UserView {
  const existing = resolveUser(db, who);
  if (existing.role === "admin" && !existing.disabled && otherActiveAdmins(db, existing.pk) === 0) {
    throw conflict("this is the last enabled admin: add or enable another admin first");
  }
  const view = toView(db, existing);
  db.delete(users).where(eq(users.pk, existing.pk)).run();
  return view;
}
