import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { apps as sqliteApps, type AppRow } from "@/db/schema";
import { isPostgresState, isUniqueViolation, stateTransaction, tablesOf } from "@/db/state";
import { decryptSecret, encryptSecret, lastFour } from "@/lib/crypto/secrets";
import { acquireLock, newOwnerId } from "@/lib/locks/sync-lock";
import { acquireLease, releaseLease } from "@/lib/locks/postgres-lease";

/**
 * Tenant apps: the registry every other part reads. Secrets go in encrypted and come
 * out only through `appConnection` (for the sync) and `webhookCredentials` (for the
 * ingest); everything meant for display goes through `describeApp`.
 *
 * Asynchronous, one query for the SQLite file and Postgres alike (DATABASE_URL;
 * docs/decisions/0042-state-queries-in-two-dialects.md): the secrets are the same
 * ciphertext in both, readable under the same AUTH_SECRET.
 */

export const REGIONS = ["us", "eu", "in"] as const;
export type Region = (typeof REGIONS)[number];

// The platform's app ids are DNS labels in `{appid}.call-{region}.<domain>`.
const appIdSchema = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$|^[a-z0-9]$/i, "app id must be letters, digits and dashes (a DNS label, up to 63 characters)");

const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
  .transform((u) => u.replace(/\/+$/, ""));

const webhookFields = {
  webhookId: z.string().trim().min(1).max(50, "webhook id must be at most 50 characters").optional(),
  webhookName: z.string().trim().min(1).max(50, "webhook name must be at most 50 characters").optional(),
  webhookEnabled: z.boolean().optional(),
  webhookUseBasicAuth: z.boolean().optional(),
  webhookUsername: z.string().min(1).max(200).optional(),
  webhookPassword: z.string().min(1).max(200).optional(),
};

export const addAppSchema = z.object({
  appId: appIdSchema,
  name: z.string().trim().min(1, "name is required").max(100),
  region: z.enum(REGIONS, { error: "region must be one of us, eu, in" }),
  apiKey: z.string().trim().min(1, "api key is required").max(500),
  callsUrl: httpUrl.optional(),
  onBehalfOf: z.string().trim().min(1).max(200).optional(),
  ...webhookFields,
});
export type AddAppInput = z.input<typeof addAppSchema>;

export const updateAppSchema = addAppSchema.partial().extend({ appId: appIdSchema, callsUrl: httpUrl.nullable().optional() });
export type UpdateAppInput = z.input<typeof updateAppSchema>;

export class AppRegistryError extends Error {
  constructor(
    message: string,
    readonly code: "not_found" | "conflict" | "invalid",
  ) {
    super(message);
    this.name = "AppRegistryError";
  }
}

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown): T {
  const r = schema.safeParse(input);
  if (!r.success) {
    const msg = r.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    throw new AppRegistryError(msg, "invalid");
  }
  return r.data;
}

export async function listApps(db: Db): Promise<AppRow[]> {
  const { apps } = tablesOf(db);
  return await db.select().from(apps).orderBy(asc(apps.appId));
}

export async function getAppById(db: Db, appId: string): Promise<AppRow | undefined> {
  const { apps } = tablesOf(db);
  const [row] = await db.select().from(apps).where(eq(apps.appId, appId));
  return row;
}

/**
 * The same reads, synchronous and on the SQLite file only, for the modules that have not
 * moved to both dialects yet (alerts, statements, preferences, the sync's runs), as
 * `auditSync` is (docs/decisions/0042-state-queries-in-two-dialects.md §4). Each goes when
 * its module moves.
 */
export function listAppsSync(db: Db): AppRow[] {
  return db.select().from(sqliteApps).orderBy(asc(sqliteApps.appId)).all();
}

export function getAppByIdSync(db: Db, appId: string): AppRow | undefined {
  return db.select().from(sqliteApps).where(eq(sqliteApps.appId, appId)).get();
}

const alreadyRegistered = (appId: string) => new AppRegistryError(`app "${appId}" is already registered`, "conflict");

export async function addApp(db: Db, input: AddAppInput): Promise<AppRow> {
  const v = parseOrThrow(addAppSchema, input);
  if (await getAppById(db, v.appId)) throw alreadyRegistered(v.appId);
  const now = Date.now();
  const useBasic = v.webhookUseBasicAuth ?? Boolean(v.webhookUsername && v.webhookPassword);
  if (useBasic && !(v.webhookUsername && v.webhookPassword)) {
    throw new AppRegistryError("webhook Basic auth needs both a username and a password", "invalid");
  }
  const { apps } = tablesOf(db);
  try {
    const [row] = await db
      .insert(apps)
      .values({
        appId: v.appId,
        name: v.name,
        region: v.region,
        apiKeyEnc: encryptSecret(v.apiKey),
        apiKeyLast4: lastFour(v.apiKey),
        callsUrl: v.callsUrl ?? null,
        onBehalfOf: v.onBehalfOf ?? null,
        webhookId: v.webhookId ?? null,
        webhookName: v.webhookName ?? null,
        webhookEnabled: v.webhookEnabled ?? true,
        webhookUseBasicAuth: useBasic,
        webhookUsername: v.webhookUsername ?? null,
        webhookPasswordEnc: v.webhookPassword ? encryptSecret(v.webhookPassword) : null,
        createdMs: now,
        updatedMs: now,
      })
      .returning();
    return row!;
  } catch (error) {
    // Another server registered the same id between our check and our insert.
    if (isUniqueViolation(error)) throw alreadyRegistered(v.appId);
    throw error;
  }
}

export async function updateApp(db: Db, input: UpdateAppInput): Promise<AppRow> {
  const v = parseOrThrow(updateAppSchema, input);
  const existing = await getAppById(db, v.appId);
  if (!existing) throw new AppRegistryError(`app "${v.appId}" is not registered`, "not_found");
  const patch: Partial<AppRow> = { updatedMs: Date.now() };
  if (v.name !== undefined) patch.name = v.name;
  if (v.region !== undefined) patch.region = v.region;
  if (v.apiKey !== undefined) {
    patch.apiKeyEnc = encryptSecret(v.apiKey);
    patch.apiKeyLast4 = lastFour(v.apiKey);
  }
  if (v.callsUrl !== undefined) patch.callsUrl = v.callsUrl;
  if (v.onBehalfOf !== undefined) patch.onBehalfOf = v.onBehalfOf;
  if (v.webhookId !== undefined) patch.webhookId = v.webhookId;
  if (v.webhookName !== undefined) patch.webhookName = v.webhookName;
  if (v.webhookEnabled !== undefined) patch.webhookEnabled = v.webhookEnabled;
  if (v.webhookUsername !== undefined) patch.webhookUsername = v.webhookUsername;
  if (v.webhookPassword !== undefined) patch.webhookPasswordEnc = encryptSecret(v.webhookPassword);
  if (v.webhookUseBasicAuth !== undefined) patch.webhookUseBasicAuth = v.webhookUseBasicAuth;
  else if (v.webhookUsername !== undefined || v.webhookPassword !== undefined) patch.webhookUseBasicAuth = true;
  const merged = { ...existing, ...patch };
  if (merged.webhookUseBasicAuth && !(merged.webhookUsername && merged.webhookPasswordEnc)) {
    throw new AppRegistryError("webhook Basic auth needs both a username and a password", "invalid");
  }
  const { apps } = tablesOf(db);
  const [row] = await db.update(apps).set(patch).where(eq(apps.pk, existing.pk)).returning();
  // Removed by another server since we read it.
  if (!row) throw new AppRegistryError(`app "${v.appId}" is not registered`, "not_found");
  return row;
}

const beingSynced = (appId: string, sinceMs: number) =>
  new AppRegistryError(`app "${appId}" is being synced (since ${new Date(sinceMs).toISOString()}); remove it when the sync has finished`, "conflict");

/**
 * Removes the app and, by cascade, its calls, participants, recordings and runs. Not
 * while a sync of the app runs: its lock is taken first. The sync's write worker does not
 * check foreign keys (lib/sync/write-worker.ts), so it would go on writing calls of an
 * app that is gone. The lock differs by dialect (decision 0035 §7): the SQLite lock is
 * taken in the delete's transaction; the Postgres lease (the database's clock, no pid
 * shortcut) is taken first, and once it is ours no other server starts a sync of the
 * app, so the delete (which takes the lease row with it, by cascade) needs no transaction.
 */
export async function removeApp(db: Db, appId: string): Promise<void> {
  const existing = await getAppById(db, appId);
  if (!existing) throw new AppRegistryError(`app "${appId}" is not registered`, "not_found");
  const { apps } = tablesOf(db);
  if (isPostgresState(db)) {
    const pool = (db as unknown as PgDb).$client;
    const owner = newOwnerId();
    const lease = await acquireLease(pool, existing.pk, owner, REMOVAL_LEASE_MS);
    if (!lease.acquired) throw beingSynced(appId, lease.acquiredMs);
    try {
      await db.delete(apps).where(eq(apps.pk, existing.pk));
    } catch (error) {
      await releaseLease(pool, existing.pk, owner).catch(() => {});
      throw error;
    }
    return;
  }
  await stateTransaction(db, async (tx) => {
    const lock = acquireLock(tx, existing.pk, newOwnerId());
    if (!lock.acquired) throw beingSynced(appId, lock.acquiredMs);
    await tx.delete(apps).where(eq(apps.pk, existing.pk)); // the lock row goes with it (cascade)
  });
}

/** How long a removal holds the app's Postgres lease should its delete hang (it is released by the cascade at once). */
const REMOVAL_LEASE_MS = 60_000;

/** What the webhook receiver checks a delivery against: no secret in clear, the password as stored (encrypted). */
export interface WebhookAuthSettings {
  pk: number;
  appId: string;
  webhookEnabled: boolean;
  webhookUseBasicAuth: boolean;
  webhookUsername: string | null;
  webhookPasswordEnc: string | null;
}

/** The webhook settings of an app by its platform id (the ingest's preflight), undefined when it is not registered. */
export async function webhookAuthSettings(db: Db, appId: string): Promise<WebhookAuthSettings | undefined> {
  const { apps } = tablesOf(db);
  const [row] = await db
    .select({
      pk: apps.pk,
      appId: apps.appId,
      webhookEnabled: apps.webhookEnabled,
      webhookUseBasicAuth: apps.webhookUseBasicAuth,
      webhookUsername: apps.webhookUsername,
      webhookPasswordEnc: apps.webhookPasswordEnc,
    })
    .from(apps)
    .where(eq(apps.appId, appId));
  return row;
}

export interface AppConnection {
  appId: string;
  region: Region;
  callsUrl: string;
  apiKey: string;
  onBehalfOf?: string;
}

/** `https://{appid}.call-{region}.{domain}/v3`, or the app's own override. */
export function callsUrlFor(app: Pick<AppRow, "appId" | "region" | "callsUrl">, domain?: string): string {
  if (app.callsUrl) return app.callsUrl;
  if (!domain) {
    throw new AppRegistryError(
      `app "${app.appId}" has no Calls API address: set PLATFORM_DOMAIN or give the app --calls-url`,
      "invalid",
    );
  }
  return `https://${app.appId}.call-${app.region}.${domain}/v3`;
}

/** What the sync needs to talk to the platform for this app (decrypts the key). */
export function appConnection(app: AppRow, domain?: string): AppConnection {
  return {
    appId: app.appId,
    region: app.region,
    callsUrl: callsUrlFor(app, domain),
    apiKey: decryptSecret(app.apiKeyEnc),
    onBehalfOf: app.onBehalfOf ?? undefined,
  };
}

/** Safe to print, log or send to a browser: no secret, only the key's last four. */
export function describeApp(app: AppRow) {
  return {
    appId: app.appId,
    name: app.name,
    region: app.region,
    apiKey: `…${app.apiKeyLast4}`,
    callsUrl: app.callsUrl,
    onBehalfOf: app.onBehalfOf,
    webhook: {
      id: app.webhookId,
      name: app.webhookName,
      enabled: app.webhookEnabled,
      useBasicAuth: app.webhookUseBasicAuth,
      username: app.webhookUsername,
      passwordSet: app.webhookPasswordEnc !== null,
    },
    lastSuccessfulSyncMs: app.lastSuccessfulSyncMs,
  };
}
