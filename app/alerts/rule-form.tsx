"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { fetchJson } from "@/lib/ui/fetch-json";
import type { AppOption } from "@/lib/ops/scope";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "@/lib/analytics/dims";
import { label as labelOf } from "@/lib/platform/labels";
import type { RuleView } from "@/lib/alerts/rules";
import { describeWindow, METRIC_NAMES, METRICS, WINDOW_CHOICES, type Metric } from "@/lib/alerts/schema";
import { EMPTY_FORM, formToBody, ruleToForm, type RuleForm } from "./form-model";
import { SecretPanel } from "./secret-panel";

interface Saved {
  data: RuleView;
  secret?: string;
}

function Field({ id, label, children, hint }: { id: string; label: string; children: ReactNode; hint?: string }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? <span className="muted alerts-hint">{hint}</span> : null}
    </div>
  );
}

/** A filter's choices as the dashboard's filter bar names them ("Meeting", "Recorded"), never the API's codes. */
function Choice({ id, label, value, onChange, options }: { id: string; label: string; value: string; onChange: (v: string) => void; options: readonly string[] }) {
  return (
    <Field id={id} label={label}>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">Any</option>
        {options.map((o) => (
          <option key={o} value={o}>{labelOf(o)}</option>
        ))}
      </select>
    </Field>
  );
}

/** Create (no `rule`) or edit a rule; a new destination's secret is shown once, after saving, in a panel above the form. */
export function RuleFormView({ rule, apps, onSaved, onCancel }: { rule?: RuleView; apps: AppOption[]; onSaved: () => void; onCancel?: () => void }) {
  const editing = rule !== undefined;
  const idp = editing ? `rule-${rule.id}` : "new-rule";
  const [form, setForm] = useState<RuleForm>(() => (rule ? ruleToForm(rule) : EMPTY_FORM));
  const [secret, setSecret] = useState<{ ruleName: string; value: string } | null>(null);
  const set = <K extends keyof RuleForm>(key: K, value: RuleForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const save = useMutation({
    mutationFn: () =>
      fetchJson<Saved>(editing ? `/api/v1/alerts?id=${rule.id}` : "/api/v1/alerts", {
        method: editing ? "PATCH" : "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(formToBody(form, editing)),
      }),
    onSuccess: (saved) => {
      // Kept until dismissed: a later save without a new secret does not hide it.
      if (saved.secret) setSecret({ ruleName: saved.data.name, value: saved.secret });
      if (!editing) setForm(EMPTY_FORM);
      onSaved();
    },
  });
  const callMetric = METRICS[form.metric].source === "calls";
  const unit = METRICS[form.metric].unit;

  return (
    <>
      {secret ? <SecretPanel id={`${idp}-secret`} ruleName={secret.ruleName} secret={secret.value} onDismiss={() => setSecret(null)} /> : null}
      <form
        className="stack"
        aria-label={editing ? `Edit ${rule.name}` : "New alert rule"}
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <div className="ops-form-grid">
          <Field id={`${idp}-name`} label="Name">
            <input id={`${idp}-name`} type="text" value={form.name} maxLength={100} required onChange={(e) => set("name", e.target.value)} />
          </Field>
          <Field id={`${idp}-metric`} label="Metric">
            <select id={`${idp}-metric`} value={form.metric} onChange={(e) => set("metric", e.target.value as Metric)}>
              {METRIC_NAMES.map((m) => (
                <option key={m} value={m}>{METRICS[m].label}</option>
              ))}
            </select>
          </Field>
          <Field id={`${idp}-window`} label="Window">
            <select id={`${idp}-window`} value={form.windowSeconds} onChange={(e) => set("windowSeconds", e.target.value)}>
              {WINDOW_CHOICES.map((w) => (
                <option key={w} value={String(w)}>{describeWindow(w)}</option>
              ))}
            </select>
          </Field>
          <Field id={`${idp}-op`} label="Condition">
            <select id={`${idp}-op`} value={form.op} onChange={(e) => set("op", e.target.value as RuleForm["op"])}>
              <option value="above">Above a value</option>
              <option value="below">Below a value</option>
              <option value="change">Changes against the previous window</option>
            </select>
          </Field>
          {form.op === "change" ? (
            <>
              <Field id={`${idp}-percent`} label="By more than (%)">
                <input id={`${idp}-percent`} type="text" inputMode="decimal" value={form.percent} onChange={(e) => set("percent", e.target.value)} />
              </Field>
              <Field id={`${idp}-direction`} label="Direction">
                <select id={`${idp}-direction`} value={form.direction} onChange={(e) => set("direction", e.target.value as RuleForm["direction"])}>
                  <option value="either">Up or down</option>
                  <option value="up">Up</option>
                  <option value="down">Down</option>
                </select>
              </Field>
            </>
          ) : (
            <Field id={`${idp}-value`} label={`Value (${unit})`}>
              <input id={`${idp}-value`} type="text" inputMode="decimal" value={form.value} onChange={(e) => set("value", e.target.value)} />
            </Field>
          )}
          <Field id={`${idp}-min-calls`} label="Minimum calls" hint="No verdict for a window with fewer calls.">
            <input id={`${idp}-min-calls`} type="text" inputMode="numeric" value={form.minCalls} onChange={(e) => set("minCalls", e.target.value)} />
          </Field>
        </div>

        <fieldset>
          <legend>Filters</legend>
          <div className="checks" role="group" aria-label="Apps">
            {apps.map((a) => (
              <label key={a.appId}>
                <input
                  type="checkbox"
                  checked={form.apps.includes(a.appId)}
                  onChange={(e) => set("apps", e.target.checked ? [...form.apps, a.appId] : form.apps.filter((x) => x !== a.appId))}
                />
                {a.name} <span className="muted">({a.appId})</span>
              </label>
            ))}
            {form.apps.length === 0 ? <span className="muted">No app ticked: every app.</span> : null}
          </div>
          {callMetric ? (
            <div className="ops-form-grid section">
              <Choice id={`${idp}-type`} label="Type" value={form.type} onChange={(v) => set("type", v)} options={TYPES} />
              <Choice id={`${idp}-mode`} label="Mode" value={form.mode} onChange={(v) => set("mode", v)} options={MODES} />
              <Choice id={`${idp}-status`} label="Status" value={form.status} onChange={(v) => set("status", v)} options={STATUSES} />
              <Choice id={`${idp}-receiver`} label="Receiver type" value={form.receiverType} onChange={(v) => set("receiverType", v)} options={RECEIVER_TYPES} />
              <Choice id={`${idp}-recording`} label="Recording" value={form.hasRecording} onChange={(v) => set("hasRecording", v as RuleForm["hasRecording"])} options={["true", "false"]} />
              <Field id={`${idp}-uid`} label="Participant uid">
                <input id={`${idp}-uid`} type="text" value={form.uid} onChange={(e) => set("uid", e.target.value)} />
              </Field>
              <Field id={`${idp}-participants`} label="Participants count">
                <input id={`${idp}-participants`} type="text" inputMode="numeric" value={form.participantsCount} onChange={(e) => set("participantsCount", e.target.value)} />
              </Field>
            </div>
          ) : (
            <p className="muted alerts-hint">Webhook deliveries and sync runs belong to apps: only the app filter applies.</p>
          )}
        </fieldset>

        <fieldset>
          <legend>Notify a webhook (optional)</legend>
          <div className="ops-form-grid">
            <Field
              id={`${idp}-url`}
              label="Destination URL"
              hint={editing && rule.destination ? `Blank keeps ${rule.destination.origin}/${rule.destination.hint}. Re-enter it to change "allow private".` : "http(s); a chat incoming-webhook URL works (the message is in `text`)."}
            >
              <input id={`${idp}-url`} type="url" value={form.destinationUrl} placeholder="https://hooks.example.com/…" onChange={(e) => set("destinationUrl", e.target.value)} />
            </Field>
          </div>
          <div className="checks section">
            <label>
              <input type="checkbox" checked={form.allowPrivate} onChange={(e) => set("allowPrivate", e.target.checked)} />
              Allow a loopback or private address (a receiver inside your own network)
            </label>
            {editing && rule.hasDestination ? (
              <label>
                <input type="checkbox" checked={form.removeDestination} onChange={(e) => set("removeDestination", e.target.checked)} />
                Remove the destination
              </label>
            ) : null}
            <label>
              <input type="checkbox" checked={form.enabled} onChange={(e) => set("enabled", e.target.checked)} />
              Enabled
            </label>
          </div>
        </fieldset>

        <div className="ops-actions">
          <button type="submit" className="btn" disabled={save.isPending} data-testid={editing ? "save-rule" : "create-rule"}>
            {editing ? "Save rule" : "Create rule"}
          </button>
          {onCancel ? (
            <button type="button" className="btn btn-secondary" onClick={onCancel}>Close</button>
          ) : null}
        </div>
        {save.isError ? <p className="alert" role="alert">{save.error.message}</p> : null}
        {save.isSuccess ? <p className="notice" role="status">Saved &ldquo;{save.data.data.name}&rdquo;.</p> : null}
      </form>
    </>
  );
}
