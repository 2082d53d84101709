"use client";

import { useState } from "react";
import { useActionForm } from "@/components/use-action-form";
import type { ActionState } from "@/lib/auth/route-support";
import { addAppAction, createTenantAppAction, removeAppAction, updateAppAction } from "./actions";

/** What the forms may know of an app: describeApp's safe view (no secret). */
export interface AppFormView {
  appId: string;
  name: string;
  region: "us" | "eu" | "in";
  apiKey: string;
  callsUrl: string | null;
  onBehalfOf: string | null;
  webhook: { id: string | null; name: string | null; enabled: boolean; useBasicAuth: boolean; username: string | null; passwordSet: boolean };
}

function Message({ state }: { state: ActionState }) {
  if (state.error) return <p className="alert" role="alert">{state.error}</p>;
  if (state.ok) return <p className="notice" role="status">{state.ok}</p>;
  return null;
}

function RegionSelect({ id, value }: { id: string; value?: string }) {
  return (
    <div className="field">
      <label htmlFor={id}>Region</label>
      <select id={id} name="region" defaultValue={value ?? "us"} required>
        <option value="us">us</option>
        <option value="eu">eu</option>
        <option value="in">in</option>
      </select>
    </div>
  );
}

function WebhookFields({ prefix, app }: { prefix: string; app?: AppFormView }) {
  const w = app?.webhook;
  const [basic, setBasic] = useState(w?.useBasicAuth ?? true);
  return (
    <fieldset className="stack">
      <legend>Webhook</legend>
      <div className="ops-form-grid">
        <div className="field">
          <label htmlFor={`${prefix}-wid`}>Webhook id</label>
          <input id={`${prefix}-wid`} name="webhookId" type="text" maxLength={50} defaultValue={w?.id ?? ""} placeholder="as in the platform's console" />
        </div>
        <div className="field">
          <label htmlFor={`${prefix}-wname`}>Webhook name</label>
          <input id={`${prefix}-wname`} name="webhookName" type="text" maxLength={50} defaultValue={w?.name ?? ""} />
        </div>
      </div>
      <p className="ops-hint">At most 50 characters each, as the platform requires.</p>
      <div className="checks">
        <label className="ops-check">
          <input type="checkbox" name="webhookEnabled" defaultChecked={w?.enabled ?? true} /> Accept deliveries
        </label>
        <label className="ops-check">
          <input type="checkbox" name="webhookUseBasicAuth" checked={basic} onChange={(e) => setBasic(e.target.checked)} /> Require HTTP Basic auth
        </label>
      </div>
      {basic ? (
        <div className="ops-form-grid">
          <div className="field">
            <label htmlFor={`${prefix}-wuser`}>Username</label>
            <input id={`${prefix}-wuser`} name="webhookUsername" type="text" maxLength={200} autoComplete="off" defaultValue={w?.username ?? ""} />
          </div>
          <div className="field">
            <label htmlFor={`${prefix}-wpass`}>Password</label>
            <input
              id={`${prefix}-wpass`}
              name="webhookPassword"
              type="password"
              maxLength={200}
              autoComplete="new-password"
              placeholder={w?.passwordSet ? "set — leave blank to keep" : "not set"}
              aria-describedby={`${prefix}-wpass-hint`}
            />
            <p className="ops-hint" id={`${prefix}-wpass-hint`}>Write-only: never shown again.</p>
          </div>
        </div>
      ) : null}
    </fieldset>
  );
}

export function AddAppForm() {
  const { state, pending, ref, onSubmit } = useActionForm(addAppAction, true);
  return (
    <form ref={ref} onSubmit={onSubmit} className="stack" aria-label="Add a tenant app">
      <div className="ops-form-grid">
        <div className="field">
          <label htmlFor="add-id">App id</label>
          <input id="add-id" name="appId" type="text" required maxLength={63} pattern="[A-Za-z0-9][A-Za-z0-9\-]*" autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="add-name">Name</label>
          <input id="add-name" name="name" type="text" required maxLength={100} />
        </div>
        <RegionSelect id="add-region" />
        <div className="field">
          <label htmlFor="add-key">API key</label>
          <input id="add-key" name="apiKey" type="password" required maxLength={500} autoComplete="off" aria-describedby="add-key-hint" />
          <p className="ops-hint" id="add-key-hint">Stored encrypted; only its last four characters are shown.</p>
        </div>
        <div className="field">
          <label htmlFor="add-url">Calls API address (optional)</label>
          <input id="add-url" name="callsUrl" type="url" placeholder="default: from PLATFORM_DOMAIN" />
        </div>
        <div className="field">
          <label htmlFor="add-obo">On behalf of (optional)</label>
          <input id="add-obo" name="onBehalfOf" type="text" maxLength={200} />
        </div>
      </div>
      <WebhookFields prefix="add" />
      <Message state={state} />
      <div>
        <button type="submit" className="btn" disabled={pending}>{pending ? "Adding…" : "Add app"}</button>
      </div>
    </form>
  );
}

export function EditAppForm({ app }: { app: AppFormView }) {
  const { state, pending, ref, onSubmit } = useActionForm(updateAppAction, false);
  const p = `edit-${app.appId}`;
  return (
    <form ref={ref} onSubmit={onSubmit} className="stack" aria-label={`Edit ${app.appId}`}>
      <input type="hidden" name="appId" value={app.appId} />
      <div className="ops-form-grid">
        <div className="field">
          <label htmlFor={`${p}-name`}>Name</label>
          <input id={`${p}-name`} name="name" type="text" required maxLength={100} defaultValue={app.name} />
        </div>
        <RegionSelect id={`${p}-region`} value={app.region} />
        <div className="field">
          <label htmlFor={`${p}-key`}>New API key</label>
          <input id={`${p}-key`} name="apiKey" type="password" maxLength={500} autoComplete="off" placeholder={`${app.apiKey} — leave blank to keep`} />
        </div>
        <div className="field">
          <label htmlFor={`${p}-url`}>Calls API address</label>
          <input id={`${p}-url`} name="callsUrl" type="url" defaultValue={app.callsUrl ?? ""} placeholder="blank: from PLATFORM_DOMAIN" />
        </div>
        <div className="field">
          <label htmlFor={`${p}-obo`}>On behalf of</label>
          <input id={`${p}-obo`} name="onBehalfOf" type="text" maxLength={200} defaultValue={app.onBehalfOf ?? ""} />
        </div>
      </div>
      <WebhookFields prefix={p} app={app} />
      <Message state={state} />
      <div>
        <button type="submit" className="btn" disabled={pending}>{pending ? "Saving…" : "Save"}</button>
      </div>
    </form>
  );
}

export function RemoveAppForm({ appId }: { appId: string }) {
  const { state, pending, ref, onSubmit } = useActionForm(removeAppAction, false);
  return (
    <form ref={ref} onSubmit={onSubmit} className="stack" aria-label={`Remove ${appId}`}>
      <input type="hidden" name="appId" value={appId} />
      <p className="ops-hint">Removes the app with its calls, recordings, webhook history and sync runs. This cannot be undone.</p>
      <div className="row-form">
        <div className="field">
          <label htmlFor={`remove-${appId}`}>Type {appId} to confirm</label>
          <input id={`remove-${appId}`} name="confirm" type="text" autoComplete="off" required />
        </div>
        <button type="submit" className="btn btn-danger" disabled={pending}>{pending ? "Removing…" : "Remove app"}</button>
      </div>
      <Message state={state} />
    </form>
  );
}

export function CreateTenantForm({ configured }: { configured: boolean }) {
  const { state, pending, ref, onSubmit } = useActionForm(createTenantAppAction, true);
  return (
    <form ref={ref} onSubmit={onSubmit} className="stack" aria-label="Create an app on the platform">
      {configured ? null : (
        <p className="hint" data-testid="tenant-setup">
          Creating apps from here needs the platform&apos;s multi-tenancy keys. To turn it on, set <code>PLATFORM_MANAGEMENT_URL</code>,{" "}
          <code>PLATFORM_MANAGEMENT_KEY</code> and <code>PLATFORM_MANAGEMENT_SECRET</code> on the server and restart it (README, &ldquo;Connecting real apps&rdquo;).
          Until then, add apps you already have with the form above.
        </p>
      )}
      {/* Disabled, not hidden, until configured: the form shows what it will ask for. */}
      <fieldset className="plain-fieldset" disabled={!configured}>
      <div className="ops-form-grid">
        <div className="field">
          <label htmlFor="tenant-name">Name</label>
          <input id="tenant-name" name="name" type="text" required maxLength={100} />
        </div>
        <div className="field">
          <label htmlFor="tenant-version">Version</label>
          <input id="tenant-version" name="version" type="text" maxLength={20} defaultValue="1.0" />
        </div>
        <RegionSelect id="tenant-region" />
        <div className="field">
          <label htmlFor="tenant-url">Calls API address (optional)</label>
          <input id="tenant-url" name="callsUrl" type="url" placeholder="{appId} is replaced by the new id" />
        </div>
      </div>
      <Message state={state} />
      <div>
        <button type="submit" className="btn" disabled={pending || !configured}>{pending ? "Creating…" : "Create on the platform"}</button>
      </div>
      </fieldset>
    </form>
  );
}

/** The ingest URL with a Copy button (falls back to selecting the text). */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState<"" | "ok" | "select">("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("ok");
    } catch {
      const el = document.getElementById(id);
      if (el) window.getSelection()?.selectAllChildren(el);
      setCopied("select");
    }
  };
  return (
    <div className="field">
      <span className="kpi-label" id={`${id}-label`}>{label}</span>
      <div className="ops-copy">
        <code id={id} data-testid="ingest-url">{value}</code>
        <button type="button" className="btn btn-secondary" onClick={copy} aria-describedby={`${id}-label`}>Copy</button>
        <span role="status" className="ops-hint">{copied === "ok" ? "Copied." : copied === "select" ? "Selected: press Ctrl+C." : ""}</span>
      </div>
    </div>
  );
}
