"use client";

import { useActionForm } from "@/components/use-action-form";
import type { ActionState } from "@/lib/auth/route-support";
import { removePriceSheetAction, setPriceSheetAction } from "./actions";

const DEFAULT_SCOPE = "__default__";

function Message({ state }: { state: ActionState }) {
  if (state.error) return <p className="alert" role="alert">{state.error}</p>;
  if (state.ok) return <p className="notice" role="status">{state.ok}</p>;
  return null;
}

function Field({ id, label, hint, ...input }: { id: string; label: string; hint?: string } & React.InputHTMLAttributes<HTMLInputElement>) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="text" {...input} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint ? <span id={`${id}-hint`} className="muted">{hint}</span> : null}
    </div>
  );
}

/** Set (or replace) the sheet of an app or the default from a month. */
export function SetPriceSheetForm({ apps, month }: { apps: Array<{ appId: string; name: string }>; month: string }) {
  // A refused sheet keeps what was typed; a set one clears the form.
  const { state, pending, ref, onSubmit } = useActionForm(setPriceSheetAction, true);
  return (
    <form ref={ref} onSubmit={onSubmit} className="stack" aria-label="Set prices">
      <div className="row-form">
        <div className="field">
          <label htmlFor="price-app">For</label>
          <select id="price-app" name="app" defaultValue={DEFAULT_SCOPE}>
            <option value={DEFAULT_SCOPE}>Account default (every app without its own)</option>
            {apps.map((a) => (
              <option key={a.appId} value={a.appId}>{a.name} ({a.appId})</option>
            ))}
          </select>
        </div>
        <Field id="price-month" label="From month" name="effectiveMonth" type="month" required defaultValue={month} />
        <Field id="price-currency" label="Currency" name="currency" required maxLength={3} size={5} defaultValue="USD" hint="ISO 4217" />
      </div>
      <div className="row-form">
        <Field id="price-audio" label="Per audio participant-minute" name="audioPerMinute" inputMode="decimal" required size={10} placeholder="0.004" />
        <Field id="price-video" label="Per video participant-minute" name="videoPerMinute" inputMode="decimal" required size={10} placeholder="0.01" />
        <Field id="price-recording" label="Per recording" name="perRecording" inputMode="decimal" required size={10} placeholder="0.05" />
        <Field id="price-included" label="Included minutes" name="includedMinutes" inputMode="decimal" size={10} placeholder="0" hint="audio and video together" />
        <Field id="price-minimum" label="Monthly minimum" name="monthlyMinimum" inputMode="decimal" size={10} placeholder="0" />
        <button type="submit" className="btn" disabled={pending}>Set prices</button>
      </div>
      <Message state={state} />
    </form>
  );
}

export function RemovePriceSheetForm({ app, effectiveMonth, label }: { app: string | null; effectiveMonth: string; label: string }) {
  const { state, pending, ref, onSubmit } = useActionForm(removePriceSheetAction, false);
  return (
    <form ref={ref} onSubmit={onSubmit} aria-label={`Remove ${label}`}>
      <input type="hidden" name="app" value={app ?? DEFAULT_SCOPE} />
      <input type="hidden" name="effectiveMonth" value={effectiveMonth} />
      <Message state={state} />
      <button type="submit" className="btn btn-danger" disabled={pending}>Remove</button>
    </form>
  );
}
