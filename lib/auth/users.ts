import { and, asc, count, eq, inArray, ne } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import type { UserRow } from "@/db/schema";
import { isUniqueViolation, stateTransaction, tablesOf } from "@/db/state";
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

export async function getUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const { users } = tablesOf(db);
  const [row] = await db.select().from(users).where(eq(users.email, normalizeEmail(email)));
  return row;
}

export async function getUserByPk(db: Db, pk: number): Promise<UserRow | undefined> {
  const { users } = tablesOf(db);
  const [row] = await db.select().from(users).where(eq(users.pk, pk));
  return row;
}

export async function countUsers(db: Db): Promise<number> {
  const { users } = tablesOf(db);
  const [row] = await db.select({ n: count() }).from(users);
  return row?.n ?? 0;
}

/** App pks granted to a user (apps that still exist: grants cascade with the app). */
export async function grantedAppPks(db: Db, userPk: number): Promise<number[]> {
  const { userAppGrants } = tablesOf(db);
  const rows = await db
    .select({ appPk: userAppGrants.appPk })
    .from(userAppGrants)
    .where(eq(userAppGrants.userPk, userPk))
    .orderBy(asc(userAppGrants.appPk));
  return rows.map((r) => r.appPk);
}

async function appPksFor(db: Db, appIds: string[]): Promise<number[]> {
  const unique = [...new Set(appIds)];
  if (unique.length === 0) return [];
  const { apps } = tablesOf(db);
  const rows = await db.select({ pk: apps.pk, appId: apps.appId }).from(apps).where(inArray(apps.appId, unique));
  const missing = unique.filter((id) => !rows.some((r) => r.appId === id));
  if (missing.length > 0) throw badRequest(`unknown app${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`, { parameter: "apps" });
  return rows.map((r) => r.pk);
}

async function toView(db: Db, row: UserRow): Promise<UserView> {
  const { apps, userAppGrants } = tablesOf(db);
  const granted = (
    await db
      .select({ appId: apps.appId })
      .from(userAppGrants)
      .innerJoin(apps, eq(apps.pk, userAppGrants.appPk))
      .where(eq(userAppGrants.userPk, row.pk))
      .orderBy(asc(apps.appId))
  ).map((r) => r.appId);
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

export async function listUsers(db: Db): Promise<UserView[]> {
  const { users } = tablesOf(db);
  const rows = await db.select().from(users).orderBy(asc(users.email));
  return Promise.all(rows.map((r) => toView(db, r)));
}

export async function getUserView(db: Db, pk: number): Promise<UserView | undefined> {
  const row = await getUserByPk(db, pk);
  return row ? toView(db, row) : undefined;
}

async function otherActiveAdmins(db: Db, exceptPk: number): Promise<number> {
  const { users } = tablesOf(db);
  const [row] = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.role, "admin"), eq(users.disabled, false), ne(users.pk, exceptPk)));
  return row?.n ?? 0;
}

async function setGrants(tx: Db, userPk: number, appPks: number[]): Promise<void> {
  const { userAppGrants } = tablesOf(tx);
  await tx.delete(userAppGrants).where(eq(userAppGrants.userPk, userPk));
  if (appPks.length > 0) await tx.insert(userAppGrants).values(appPks.map((appPk) => ({ userPk, appPk })));
}

export async function createUser(db: Db, input: CreateUserInput): Promise<UserView> {
  const v = parse(createUserSchema, input);
  if (await getUserByEmail(db, v.email)) throw conflict(`a user with email ${v.email} already exists`);
  const appPks = await appPksFor(db, v.apps);
  const passwordHash = await hashPassword(v.password);
  const now = Date.now();
  let row: UserRow;
  try {
    row = await stateTransaction(db, async (tx) => {
      const [created] = await tx
        .insert(tablesOf(tx).users)
        .values({ email: v.email, passwordHash, role: v.role, disabled: v.disabled, createdMs: now, updatedMs: now })
        .returning();
      await setGrants(tx, created!.pk, appPks);
      return created!;
    });
  } catch (error) {
    // Another server (or request) created the same email while the password was hashed.
    if (isUniqueViolation(error)) throw conflict(`a user with email ${v.email} already exists`);
    throw error;
  }
  return toView(db, row);
}

/** Finds a user by pk or email, or answers 404. */
export async function resolveUser(db: Db, who: number | string): Promise<UserRow> {
  const row = typeof who === "number" ? await getUserByPk(db, who) : await getUserByEmail(db, who);
  if (!row) throw notFound(typeof who === "number" ? `no user with id ${who}` : `no user with email ${normalizeEmail(who)}`);
  return row;
}

/**
 * Changes a user. A password change or a disable ends the user's current sessions
 * (the session epoch moves on). The last enabled admin cannot be demoted or disabled.
 */
export async function updateUser(db: Db, who: number | string, input: UpdateUserInput): Promise<UserView> {
  const v = parse(updateUserSchema, input);
  const existing = await resolveUser(db, who);
  if (v.email !== undefined && v.email !== existing.email && (await getUserByEmail(db, v.email))) {
    throw conflict(`a user with email ${v.email} already exists`);
  }
  const losesAdmin = existing.role === "admin" && !existing.disabled && (v.role === "viewer" || v.disabled === true);
  if (losesAdmin && (await otherActiveAdmins(db, existing.pk)) === 0) {
    throw conflict("this is the last enabled admin: add or enable another admin first");
  }
  const appPks = v.apps === undefined ? undefined : await appPksFor(db, v.apps);
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
  try {
    await stateTransaction(db, async (tx) => {
      const { users } = tablesOf(tx);
      await tx.update(users).set(patch).where(eq(users.pk, existing.pk));
      if (appPks !== undefined) await setGrants(tx, existing.pk, appPks);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a user with email ${v.email} already exists`);
    throw error;
  }
  return toView(db, await resolveUser(db, existing.pk));
}

/** Removes a user with their grants and tokens. The last enabled admin stays. */
export async function removeUser(db: Db, who: number | string): Promise<UserView> {
  const existing = await resolveUser(db, who);
  if (existing.role === "admin" && !existing.disabled && (await otherActiveAdmins(db, existing.pk)) === 0) {
    throw conflict("this is the last enabled admin: add or enable another admin first");
  }
  const view = await toView(db, existing);
  const { users } = tablesOf(db);
  await db.delete(users).where(eq(users.pk, existing.pk));
  return view;
}
