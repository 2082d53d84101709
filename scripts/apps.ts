/**
 * `npm run apps -- add|update|list|remove …`: the tenant apps Callboard syncs.
 * Secrets are accepted here and never printed back (list shows the key's last four).
 */
import { Command, Option } from "commander";
import { db } from "@/db";
import { loadDotEnv } from "@/lib/config/dotenv";
import { addApp, describeApp, listApps, removeApp, updateApp, type UpdateAppInput } from "@/lib/apps/registry";
import { createTenantApp } from "@/lib/apps/tenant-create";
import { env } from "@/lib/config/env";
import { ingestUrlFor } from "@/lib/ingest/url";
import { audit } from "@/lib/auth/audit";
import { printTable, runCli } from "@/lib/cli/run";

loadDotEnv();

interface AppOptions {
  id: string;
  name?: string;
  region?: string;
  apiKey?: string;
  callsUrl?: string;
  onBehalfOf?: string;
  webhookId?: string;
  webhookName?: string;
  webhookUser?: string;
  webhookPassword?: string;
  webhookBasicAuth?: boolean;
  webhookEnabled?: boolean;
  json?: boolean;
}

function withAppOptions(cmd: Command, required: boolean): Command {
  cmd
    .requiredOption("--id <appId>", "the platform's app id")
    .option("--region <region>", "us, eu or in")
    .option("--api-key <key>", "REST API key with full-access scope")
    .option("--calls-url <url>", "override of https://{appid}.call-{region}.{PLATFORM_DOMAIN}/v3")
    .option("--on-behalf-of <uid>", "send the onBehalfOf header with this uid")
    .option("--webhook-id <id>", "the platform webhook's id (max 50 characters)")
    .option("--webhook-name <name>", "the platform webhook's name (max 50 characters)")
    .option("--webhook-user <username>", "Basic auth username the platform sends")
    .option("--webhook-password <password>", "Basic auth password the platform sends")
    .addOption(new Option("--webhook-basic-auth", "require Basic auth on deliveries"))
    .addOption(new Option("--no-webhook-basic-auth", "accept deliveries without Basic auth"))
    .addOption(new Option("--webhook-enabled", "accept deliveries"))
    .addOption(new Option("--no-webhook-enabled", "refuse deliveries"));
  if (required) cmd.requiredOption("--name <name>", "display name");
  else cmd.option("--name <name>", "display name");
  return cmd;
}

function toInput(o: AppOptions): UpdateAppInput {
  return {
    appId: o.id,
    name: o.name,
    region: o.region as UpdateAppInput["region"],
    apiKey: o.apiKey,
    callsUrl: o.callsUrl,
    onBehalfOf: o.onBehalfOf,
    webhookId: o.webhookId,
    webhookName: o.webhookName,
    webhookUsername: o.webhookUser,
    webhookPassword: o.webhookPassword,
    webhookUseBasicAuth: o.webhookBasicAuth,
    webhookEnabled: o.webhookEnabled,
  };
}

/** Where the platform must POST this app's webhooks (paste it into the platform's console). */
function ingestUrl(appId: string): string {
  const e = env();
  return ingestUrlFor(e.CALLBOARD_PUBLIC_URL ?? `http://localhost:${e.PORT}`, appId);
}

/** Audit rows written from the command line name this actor. */
const CLI_ACTOR = { email: "cli" };

/** What changed, without values of secrets (the audit log scrubs them too). */
function changedFields(o: AppOptions): string[] {
  return Object.entries(o)
    .filter(([k, v]) => v !== undefined && k !== "id" && k !== "json")
    .map(([k]) => k);
}

const program = new Command("apps").description("Manage the tenant apps Callboard syncs").exitOverride();

withAppOptions(program.command("add").description("register a tenant app"), true).action(async (o: AppOptions) => {
  if (!o.region) throw new Error("--region is required (us, eu or in)");
  if (!o.apiKey) throw new Error("--api-key is required");
  const input = toInput(o);
  const app = addApp(db(), { ...input, callsUrl: o.callsUrl, name: o.name!, region: o.region as "us", apiKey: o.apiKey });
  await audit(db(), CLI_ACTOR, "app.create", app.appId, { region: app.region, fields: changedFields(o) });
  console.log(`Added app ${app.appId} (${app.region}), key …${app.apiKeyLast4}`);
  console.log(`Webhook URL for the platform's console: ${ingestUrl(app.appId)}`);
});

withAppOptions(program.command("update").description("change a tenant app"), false).action(async (o: AppOptions) => {
  const app = updateApp(db(), toInput(o));
  await audit(db(), CLI_ACTOR, "app.update", app.appId, { fields: changedFields(o) });
  console.log(`Updated app ${app.appId}`);
});

program
  .command("list")
  .description("list tenant apps (secrets are never shown)")
  .option("--json", "print JSON")
  .action((o: { json?: boolean }) => {
    const rows = listApps(db()).map((a) => ({ ...describeApp(a), ingestUrl: ingestUrl(a.appId) }));
    if (o.json) return console.log(JSON.stringify(rows, null, 2));
    if (rows.length === 0) return console.log("No tenant app registered. Add one with: npm run apps -- add --id … --name … --region us --api-key …");
    printTable(
      rows.map((a) => ({
        id: a.appId,
        name: a.name,
        region: a.region,
        key: a.apiKey,
        callsUrl: a.callsUrl ?? "(from PLATFORM_DOMAIN)",
        webhook: a.webhook.enabled ? (a.webhook.useBasicAuth ? `on, basic (${a.webhook.username})` : "on") : "off",
        ingestUrl: a.ingestUrl,
        lastSync: a.lastSuccessfulSyncMs ? new Date(a.lastSuccessfulSyncMs).toISOString() : "never",
      })),
    );
  });

program
  .command("remove")
  .description("remove a tenant app and all its calls")
  .requiredOption("--id <appId>", "the platform's app id")
  .action(async (o: { id: string }) => {
    removeApp(db(), o.id);
    await audit(db(), CLI_ACTOR, "app.remove", o.id);
    console.log(`Removed app ${o.id}`);
  });

program
  .command("create")
  .description("create a NEW tenant app on the platform (multi-tenancy; needs PLATFORM_MANAGEMENT_URL/KEY/SECRET) and register it")
  .requiredOption("--name <name>", "the new app's name")
  .requiredOption("--region <region>", "us, eu or in")
  .option("--version <version>", "the app version sent to the platform", "1.0")
  .option("--calls-url <url>", "Calls API address when not derived from PLATFORM_DOMAIN; {appId} is replaced")
  .action(async (o: { name: string; region: string; version: string; callsUrl?: string }) => {
    if (!["us", "eu", "in"].includes(o.region)) throw new Error("--region must be one of us, eu, in");
    const app = await createTenantApp(db(), CLI_ACTOR, {
      name: o.name,
      region: o.region as "us",
      version: o.version,
      callsUrl: o.callsUrl,
    });
    console.log(`Created app ${app.appId} (${app.region}) on the platform and registered it, key ${app.apiKey}`);
  });

void runCli(async () => {
  await program.parseAsync(process.argv);
});
