import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { db } from "@/db";
import "@/app/_ops/ops.css";
import { LocalTime } from "@/components/local-time";
import { describeApp, listApps } from "@/lib/apps/registry";
import { managementCredentials } from "@/lib/apps/tenant-create";
import { currentAdmin } from "@/lib/auth/session";
import { env } from "@/lib/config/env";
import { BUILD_BASE_PATH } from "@/lib/http/base-path";
import { configuredOrigin, requestOrigin } from "@/lib/http/public-origin";
import { ingestUrlFor } from "@/lib/ingest/url";
import { AddAppForm, CopyField, CreateTenantForm, EditAppForm, RemoveAppForm } from "./app-forms";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Tenant apps" };

/** CALLBOARD_PUBLIC_URL, else the address this request came in on; under BASE_PATH when it is not there already. */
async function publicBaseUrl(): Promise<string> {
  const base = (env().CALLBOARD_PUBLIC_URL ?? requestOrigin(await headers()) ?? configuredOrigin() ?? "").replace(/\/+$/, "");
  return base.endsWith(BUILD_BASE_PATH) ? base : base + BUILD_BASE_PATH;
}

export default async function TenantAppsPage() {
  await currentAdmin();
  const warehouse = db();
  const base = await publicBaseUrl();
  const domain = env().PLATFORM_DOMAIN;
  const apps = (await listApps(warehouse)).map(describeApp);
  return (
    <main id="main" tabIndex={-1} className="container">
      <div className="ops-head">
        <h1>Tenant apps</h1>
        <p className="muted"><Link href="/settings">Settings</Link> · apps, their Calls API keys and webhooks</p>
      </div>

      {apps.length === 0 ? (
        <div className="card ops-empty"><p><strong>No tenant app yet.</strong></p><p className="muted">Add one below, or create one on the platform.</p></div>
      ) : (
        apps.map((a) => {
          const callsDefault = domain ? `https://${a.appId}.call-${a.region}.${domain}/v3` : null;
          const slug = a.appId.replace(/[^a-zA-Z0-9_-]/g, "_");
          return (
            <section key={a.appId} className="card ops-app-card stack" aria-labelledby={`app-${slug}`} data-app={a.appId}>
              <div className="ops-card-head">
                <h2 id={`app-${slug}`} style={{ margin: 0 }}>{a.name}</h2>
                <code>{a.appId}</code>
                <span className="badge">{a.region}</span>
                <span className={`ops-pill ${a.webhook.enabled ? "ops-pill-applied" : "ops-pill-ended"}`}>{a.webhook.enabled ? "Webhook on" : "Webhook off"}</span>
              </div>
              <CopyField id={`ingest-${slug}`} label="Ingest URL (paste into the platform's webhook console)" value={ingestUrlFor(base, a.appId)} />
              <div className="ops-grid-2">
                <dl className="ops-kv">
                  <dt>API key</dt>
                  <dd data-testid="api-key"><code>{a.apiKey}</code></dd>
                  <dt>Calls API</dt>
                  <dd>{a.callsUrl ? <><code>{a.callsUrl}</code> <span className="muted">(override)</span></> : callsDefault ? <code>{callsDefault}</code> : <span className="ops-danger">no address: set PLATFORM_DOMAIN or an override</span>}</dd>
                  <dt>On behalf of</dt>
                  <dd>{a.onBehalfOf ?? <span className="muted">—</span>}</dd>
                  <dt>Last sync</dt>
                  <dd>{a.lastSuccessfulSyncMs ? <LocalTime ms={a.lastSuccessfulSyncMs} /> : "never"}</dd>
                </dl>
                <dl className="ops-kv">
                  <dt>Webhook id</dt>
                  <dd>{a.webhook.id ?? <span className="muted">—</span>}</dd>
                  <dt>Webhook name</dt>
                  <dd>{a.webhook.name ?? <span className="muted">—</span>}</dd>
                  <dt>Basic auth</dt>
                  <dd data-testid="basic-auth">{a.webhook.useBasicAuth ? `on, user ${a.webhook.username ?? "?"}` : "off"}</dd>
                  <dt>Password</dt>
                  <dd>{a.webhook.passwordSet ? "set (hidden)" : "not set"}</dd>
                </dl>
              </div>
              <details>
                <summary>Edit {a.appId}</summary>
                <EditAppForm app={a} />
              </details>
              <details>
                <summary>Remove {a.appId}</summary>
                <RemoveAppForm appId={a.appId} />
              </details>
            </section>
          );
        })
      )}

      <section className="card section" aria-labelledby="add-app">
        <h2 id="add-app">Add an existing app</h2>
        <AddAppForm />
      </section>

      <section className="card section" aria-labelledby="create-tenant">
        <h2 id="create-tenant">Create on the platform</h2>
        <p className="muted">Creates a new tenant app with the platform&apos;s management API and registers it here with the API key it returns.</p>
        <CreateTenantForm configured={managementCredentials() !== null} />
      </section>
    </main>
  );
}
