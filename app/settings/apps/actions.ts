"use server";

import { revalidatePath } from "next/cache";
import { db } from "@/db";
import { addApp, AppRegistryError, describeApp, getAppById, removeApp, updateApp, type Region } from "@/lib/apps/registry";
import { createTenantApp } from "@/lib/apps/tenant-create";
import { audit } from "@/lib/auth/audit";
import { runAction, type ActionState } from "@/lib/auth/route-support";
import { actionAdmin } from "@/lib/auth/session";
import { HttpError } from "@/lib/http/errors";
import { PlatformError } from "@/lib/platform/errors";

/**
 * Tenant apps and their webhooks, for admins. Every action authorizes itself and is
 * audited; secrets (API key, webhook password) go in and never come back out.
 */

const STATUS = { not_found: 404, conflict: 409, invalid: 400 } as const;

function registryErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AppRegistryError) throw new HttpError(STATUS[error.code], error.code, error.message);
    throw error;
  }
}

const text = (form: FormData, name: string): string | undefined => {
  const v = form.get(name);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
};
/** Secrets are taken as typed (no trim): a trailing space may be part of a password. */
const secret = (form: FormData, name: string): string | undefined => {
  const v = form.get(name);
  return typeof v === "string" && v !== "" ? v : undefined;
};
const checked = (form: FormData, name: string) => form.get(name) === "on";

/** The webhook settings as the audit log may show them: no password. */
function webhookSummary(app: ReturnType<typeof describeApp>) {
  const { passwordSet, ...webhook } = app.webhook;
  return { ...webhook, passwordConfigured: passwordSet };
}

export async function addAppAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const row = registryErrors(() =>
      addApp(warehouse, {
        appId: text(form, "appId") ?? "",
        name: text(form, "name") ?? "",
        region: (text(form, "region") ?? "") as Region,
        apiKey: text(form, "apiKey") ?? "",
        callsUrl: text(form, "callsUrl"),
        onBehalfOf: text(form, "onBehalfOf"),
        webhookId: text(form, "webhookId"),
        webhookName: text(form, "webhookName"),
        webhookEnabled: checked(form, "webhookEnabled"),
        webhookUseBasicAuth: checked(form, "webhookUseBasicAuth"),
        webhookUsername: text(form, "webhookUsername"),
        webhookPassword: secret(form, "webhookPassword"),
      }),
    );
    const view = describeApp(row);
    await audit(warehouse, caller, "app.create", row.appId, { name: view.name, region: view.region, callsUrl: view.callsUrl, webhook: webhookSummary(view) });
    revalidatePath("/settings/apps");
    return { ok: `Added ${view.name} (${view.appId}).` };
  });
}

export async function updateAppAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const appId = text(form, "appId") ?? "";
    const before = getAppById(warehouse, appId);
    if (!before) throw new HttpError(404, "not_found", `app "${appId}" is not registered`);
    const apiKey = secret(form, "apiKey")?.trim() || undefined;
    const webhookPassword = secret(form, "webhookPassword");
    const row = registryErrors(() =>
      updateApp(warehouse, {
        appId,
        name: text(form, "name"),
        region: text(form, "region") as Region | undefined,
        apiKey,
        // Blank: back to the default address built from PLATFORM_DOMAIN.
        callsUrl: text(form, "callsUrl") ?? null,
        onBehalfOf: text(form, "onBehalfOf"),
        webhookId: text(form, "webhookId"),
        webhookName: text(form, "webhookName"),
        webhookEnabled: checked(form, "webhookEnabled"),
        webhookUseBasicAuth: checked(form, "webhookUseBasicAuth"),
        webhookUsername: text(form, "webhookUsername"),
        webhookPassword,
      }),
    );
    const was = describeApp(before);
    const now = describeApp(row);
    const changed = (Object.keys(now) as Array<keyof typeof now>).filter((k) => k !== "webhook" && k !== "apiKey" && JSON.stringify(now[k]) !== JSON.stringify(was[k]));
    const webhookChanged = (Object.keys(now.webhook) as Array<keyof typeof now.webhook>).filter((k) => now.webhook[k] !== was.webhook[k]);
    await audit(warehouse, caller, "app.update", appId, {
      changed,
      webhookChanged,
      webhook: webhookSummary(now),
      newApiKey: apiKey !== undefined,
      newWebhookPassword: webhookPassword !== undefined,
    });
    revalidatePath("/settings/apps");
    return { ok: `Saved ${now.name} (${appId}).` };
  });
}

export async function removeAppAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const appId = text(form, "appId") ?? "";
    if (text(form, "confirm") !== appId) {
      throw new HttpError(400, "confirm", `Type the app id "${appId}" to confirm: its calls, recordings and runs are removed with it.`);
    }
    const existing = getAppById(warehouse, appId);
    registryErrors(() => removeApp(warehouse, appId));
    await audit(warehouse, caller, "app.remove", appId, { name: existing?.name ?? null });
    revalidatePath("/settings/apps");
    return { ok: `Removed ${appId}.` };
  });
}

export async function createTenantAppAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const name = text(form, "name");
    const region = text(form, "region");
    if (!name) throw new HttpError(400, "invalid", "name is required");
    if (region !== "us" && region !== "eu" && region !== "in") throw new HttpError(400, "invalid", "region must be one of us, eu, in");
    const callsUrl = text(form, "callsUrl");
    if (callsUrl !== undefined && !/^https?:\/\//i.test(callsUrl)) throw new HttpError(400, "invalid", "callsUrl: must be an http(s) URL");
    // Audited inside (app.create_tenant), with the platform's answer.
    const view = await registryErrorsAsync(() => createTenantApp(warehouse, caller, { name, version: text(form, "version"), region, callsUrl }));
    revalidatePath("/settings/apps");
    return { ok: `Created ${view.name} on the platform as ${view.appId} (${view.region}) and registered it here. Its API key is stored encrypted (${view.apiKey}).` };
  });
}

async function registryErrorsAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppRegistryError) throw new HttpError(STATUS[error.code], error.code, error.message);
    // Platform messages name the app and the platform's answer, never credentials.
    if (error instanceof PlatformError) throw new HttpError(502, "platform_error", `The platform refused: ${error.message}`);
    throw error;
  }
}
