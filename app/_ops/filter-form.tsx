import type { ReactNode } from "react";
import type { AppOption } from "./scope";

/**
 * A GET form: filters live in the URL (share, reload, back), and it works before any
 * script runs. Changes apply with the button, never on input (WCAG 3.2.2).
 */
export function FilterForm({ action, label, children }: { action: string; label: string; children: ReactNode }) {
  return (
    <form method="get" action={action} className="ops-filters" aria-label={label}>
      {children}
      <button type="submit" className="btn btn-secondary">Apply</button>
    </form>
  );
}

export function AppSelect({ id, apps, value }: { id: string; apps: AppOption[]; value: readonly string[] }) {
  return (
    <div className="field">
      <label htmlFor={id}>App</label>
      <select id={id} name="app" defaultValue={value[0] ?? ""}>
        <option value="">All apps</option>
        {apps.map((a) => (
          <option key={a.appId} value={a.appId}>
            {a.name} ({a.appId})
          </option>
        ))}
      </select>
    </div>
  );
}

export function ChoiceSelect({ id, name, label, value, choices }: { id: string; name: string; label: string; value: string | number; choices: ReadonlyArray<{ value: string | number; label: string }> }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={String(value)}>
        {choices.map((c) => (
          <option key={String(c.value)} value={String(c.value)}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Kpi({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="ops-kpi">
      <span className="ops-kpi-label">{label}</span>
      <span className="ops-kpi-value" data-testid={testId}>{value}</span>
    </div>
  );
}
