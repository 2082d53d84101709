import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { requireAdmin, type Caller } from "@/lib/auth/authorize";
import { audit, type AuditActor } from "@/lib/auth/audit";
import { env } from "@/lib/config/env";
import { HttpError } from "@/lib/http/errors";
import { createApp, type CreatedApp, type ManagementCredentials } from "@/lib/platform/management-client";
import { addApp, describeApp, getAppById, type Region } from "./registry";

/**
 * Multi-tenancy: create a tenant app on the platform (POST {management_url}/apps with
 * the account's key and secret) and register it here with the API key the platform
 * returned — encrypted at rest like every other key, audited, never echoed back.
 */
export interface CreateTenantAppInput {
  name: string;
  version?: string;
  region: Region;
  /**
   * Calls API address of the new app when it is not the default
   * `https://{appid}.call-{region}.{PLATFORM_DOMAIN}/v3`; `{appId}` is replaced by the
   * id the platform assigned (e.g. `http://localhost:4010/{appId}/v3` for the emulator).
   */
  callsUrl?: string;
}

export interface CreateTenantAppDeps {
  credentials?: ManagementCredentials;
  createApp?: typeof createApp;
}

export function managementCredentials(): ManagementCredentials | null {
  const e = env();
  if (!e.PLATFORM_MANAGEMENT_URL || !e.PLATFORM_MANAGEMENT_KEY || !e.PLATFORM_MANAGEMENT_SECRET) return null;
  return { managementUrl: e.PLATFORM_MANAGEMENT_URL, key: e.PLATFORM_MANAGEMENT_KEY, secret: e.PLATFORM_MANAGEMENT_SECRET };
}

/**
 * For a signed-in admin (settings) or the command line (`actor` = `{email: "cli"}`):
 * pass a Caller and it must be an admin.
 */
export async function createTenantApp(
  db: Db,
  actor: Caller | AuditActor,
  input: CreateTenantAppInput,
  deps: CreateTenantAppDeps = {},
): Promise<ReturnType<typeof describeApp>> {
  if ("role" in actor) requireAdmin(actor as Caller);
  const credentials = deps.credentials ?? managementCredentials();
  if (!credentials) {
    throw new HttpError(
      409,
      "not_configured",
      "Multi-tenancy is not configured: set PLATFORM_MANAGEMENT_URL, PLATFORM_MANAGEMENT_KEY and PLATFORM_MANAGEMENT_SECRET.",
    );
  }
  const created: CreatedApp = await (deps.createApp ?? createApp)(credentials, {
    name: input.name,
    version: input.version ?? "1.0",
    region: input.region,
  });
  if (!created.apiKey) {
    await audit(db, actor, "app.create_tenant", created.appId, { name: input.name, region: created.region, registered: false });
    throw new HttpError(
      502,
      "platform_incomplete",
      `The platform created app "${created.appId}" but returned no API key: register it with npm run apps -- add --id ${created.appId} --api-key <key>.`,
    );
  }
  if (getAppById(db, created.appId)) {
    throw new HttpError(409, "conflict", `The platform returned app id "${created.appId}", which is already registered here.`);
  }
  const row: AppRow = addApp(db, {
    appId: created.appId,
    name: input.name,
    region: created.region,
    apiKey: created.apiKey,
    callsUrl: input.callsUrl?.replaceAll("{appId}", encodeURIComponent(created.appId)),
  });
  await audit(db, actor, "app.create_tenant", row.appId, { name: row.name, region: row.region, version: input.version ?? "1.0" });
  return describeApp(row);
}
