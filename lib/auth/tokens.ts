import { createHash, randomBytes } from "node:crypto";
import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { tablesOf, tryStateWrite } from "@/db/state";
import { badRequest, notFound } from "@/lib/http/errors";

/**
 * API tokens: `cb_` + 32 random bytes in base64url, shown once. Only the SHA-256 is
 * stored (a fast hash is enough: the token has 256 bits of entropy, nothing to guess).
 * A `full` token carries exactly the rights of its user, read at each use; a `read`
 * token only what its user may read (authorize.ts refuses its writes and admin
 * operations). A token with an expiry is refused from that instant on.
 */
export const TOKEN_PREFIX = "cb_";
const TOKEN_PATTERN = /^cb_[A-Za-z0-9_-]{43}$/;
/** last_used_ms is written at most this often per token (a write per request is waste). */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface TokenView {
  id: number;
  name: string;
  userId: number;
  email: string;
  /** `cb_` and the first characters, to recognise a token; never enough to use it. */
  prefix: string;
  createdMs: number;
  lastUsedMs: number | null;
  revoked: boolean;
  revokedMs: number | null;
  scope: TokenScope;
  expiresMs: number | null;
}

export type TokenScope = "full" | "read";
export const TOKEN_SCOPES: readonly TokenScope[] = ["full", "read"];

const DURATION_UNIT_MS = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;
/** Ten years: a longer expiry is a typo, and "never" is saying nothing. */
const MAX_EXPIRY_MS = 3_650 * 86_400_000;

/**
 * `--expires` / the form's expiry: a duration from now (`12h`, `30d`, `8w`), or nothing
 * (never expires). Returns the instant, in epoch ms.
 */
export function parseTokenExpiry(value: string | undefined, now = Date.now()): number | null {
  const text = value?.trim() ?? "";
  if (text === "" || text === "never") return null;
  const m = /^(\d{1,6})\s*([hdw])$/i.exec(text);
  const ms = m ? Number(m[1]) * DURATION_UNIT_MS[m[2]!.toLowerCase() as keyof typeof DURATION_UNIT_MS] : NaN;
  if (!(ms > 0) || ms > MAX_EXPIRY_MS) {
    throw badRequest("expires must be a duration such as 12h, 30d or 8w (at most ten years), or empty for never", { parameter: "expires" });
  }
  return now + ms;
}

export function parseTokenScope(value: string | undefined): TokenScope {
  const text = value?.trim() || "full";
  if (!(TOKEN_SCOPES as readonly string[]).includes(text)) throw badRequest('scope must be "read" or "full"', { parameter: "scope" });
  return text as TokenScope;
}

export const tokenNameSchema = z.string().trim().min(1, "name must not be empty").max(100, "name must be at most 100 characters");

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

const viewColumnsOf = ({ apiTokens, users }: ReturnType<typeof tablesOf>) => ({
  id: apiTokens.pk,
  name: apiTokens.name,
  userId: apiTokens.userPk,
  email: users.email,
  prefix: apiTokens.prefix,
  createdMs: apiTokens.createdMs,
  lastUsedMs: apiTokens.lastUsedMs,
  revoked: apiTokens.revoked,
  revokedMs: apiTokens.revokedMs,
  scope: apiTokens.scope,
  expiresMs: apiTokens.expiresMs,
});

export async function getTokenView(db: Db, id: number): Promise<TokenView | undefined> {
  const tables = tablesOf(db);
  const { apiTokens, users } = tables;
  const [row] = await db.select(viewColumnsOf(tables)).from(apiTokens).innerJoin(users, eq(users.pk, apiTokens.userPk)).where(eq(apiTokens.pk, id));
  return row;
}

/** Creates a token for a user. The returned `token` is the only time it exists in clear. */
export async function createApiToken(
  db: Db,
  input: { userId: number; name?: string; scope?: TokenScope; expiresMs?: number | null },
): Promise<{ token: string; view: TokenView }> {
  let name = `token ${new Date().toISOString().slice(0, 10)}`;
  if (input.name !== undefined) {
    const parsed = tokenNameSchema.safeParse(input.name);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? "invalid name", { parameter: "name" });
    name = parsed.data;
  }
  const token = generateToken();
  const { apiTokens } = tablesOf(db);
  const [row] = await db
    .insert(apiTokens)
    .values({
      userPk: input.userId,
      name,
      tokenHash: hashToken(token),
      prefix: token.slice(0, TOKEN_PREFIX.length + 6),
      createdMs: Date.now(),
      scope: input.scope ?? "full",
      expiresMs: input.expiresMs ?? null,
    })
    .returning({ pk: apiTokens.pk });
  return { token, view: (await getTokenView(db, row!.pk))! };
}

/** What a list shows: revoked, expired or active. */
export function tokenStatus(t: Pick<TokenView, "revoked" | "expiresMs">, now = Date.now()): "revoked" | "expired" | "active" {
  if (t.revoked) return "revoked";
  return t.expiresMs !== null && t.expiresMs <= now ? "expired" : "active";
}

export async function listApiTokens(db: Db, filter: { userId?: number } = {}): Promise<TokenView[]> {
  const tables = tablesOf(db);
  const { apiTokens, users } = tables;
  return db
    .select(viewColumnsOf(tables))
    .from(apiTokens)
    .innerJoin(users, eq(users.pk, apiTokens.userPk))
    .where(filter.userId === undefined ? undefined : eq(apiTokens.userPk, filter.userId))
    .orderBy(desc(apiTokens.pk));
}

/** Revokes a token (idempotent); the row stays for the record. */
export async function revokeApiToken(db: Db, id: number): Promise<TokenView> {
  if (!Number.isSafeInteger(id) || id <= 0) throw badRequest("token id must be a positive integer", { parameter: "id" });
  const existing = await getTokenView(db, id);
  if (!existing) throw notFound(`no token with id ${id}`);
  if (!existing.revoked) {
    const { apiTokens } = tablesOf(db);
    await db.update(apiTokens).set({ revoked: true, revokedMs: Date.now() }).where(eq(apiTokens.pk, id));
  }
  return (await getTokenView(db, id))!;
}

export interface ResolvedToken {
  tokenId: number;
  userId: number;
  scope: TokenScope;
}

/**
 * The user a presented token belongs to, or null (malformed, unknown, revoked, expired).
 * Whether that user may still act (disabled, removed) is the caller's check.
 */
export async function resolveApiToken(db: Db, token: string, now = Date.now()): Promise<ResolvedToken | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const { apiTokens } = tablesOf(db);
  const [row] = await db
    .select({
      pk: apiTokens.pk,
      userPk: apiTokens.userPk,
      revoked: apiTokens.revoked,
      lastUsedMs: apiTokens.lastUsedMs,
      scope: apiTokens.scope,
      expiresMs: apiTokens.expiresMs,
    })
    .from(apiTokens)
    .where(eq(apiTokens.tokenHash, hashToken(token)));
  if (!row || row.revoked) return null;
  if (row.expiresMs !== null && row.expiresMs <= now) return null;
  // Even an UPDATE that matches nothing takes the write lock: ask only when it is due,
  // and never let a locked or full warehouse fail (or hold up) a script's read.
  if (row.lastUsedMs === null || row.lastUsedMs < now - LAST_USED_RESOLUTION_MS) {
    await tryStateWrite(
      db,
      db
        .update(apiTokens)
        .set({ lastUsedMs: now })
        .where(and(eq(apiTokens.pk, row.pk), or(isNull(apiTokens.lastUsedMs), lt(apiTokens.lastUsedMs, now - LAST_USED_RESOLUTION_MS)))),
    );
  }
  return { tokenId: row.pk, userId: row.userPk, scope: row.scope };
}
