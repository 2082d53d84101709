"use client";

import { useActionState } from "react";
import type { ActionState } from "@/lib/auth/route-support";
import { createTokenAction, revokeTokenAction } from "./actions";

function Message({ state }: { state: ActionState }) {
  if (state.error) return <p className="alert" role="alert">{state.error}</p>;
  if (state.ok) return <p className="notice" role="status">{state.ok}</p>;
  return null;
}

export function CreateTokenForm({ emails }: { emails: string[] }) {
  const [state, action, pending] = useActionState(createTokenAction, {});
  return (
    <form action={action} className="stack" aria-label="Create an API token">
      <div className="row-form">
        <div className="field">
          <label htmlFor="token-email">For user</label>
          <select id="token-email" name="email" required>
            {emails.map((e) => (
              <option key={e} value={e}>{e}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="token-name">Name</label>
          <input id="token-name" name="name" type="text" maxLength={100} placeholder="e.g. finance export" />
        </div>
        <div className="field">
          <label htmlFor="token-scope">Scope</label>
          <select id="token-scope" name="scope" defaultValue="full">
            <option value="full">Full: the user&apos;s rights</option>
            <option value="read">Read: reports, CSV, statements</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="token-expires">Expires</label>
          <select id="token-expires" name="expires" defaultValue="">
            <option value="">Never</option>
            <option value="1d">In 1 day</option>
            <option value="7d">In 7 days</option>
            <option value="30d">In 30 days</option>
            <option value="90d">In 90 days</option>
            <option value="365d">In a year</option>
          </select>
        </div>
        <button type="submit" className="btn" disabled={pending}>Create token</button>
      </div>
      <Message state={state} />
      {state.token ? (
        <div className="field">
          <label htmlFor="new-token">New token (shown once)</label>
          <output id="new-token" className="secret-once" data-testid="new-token">{state.token}</output>
        </div>
      ) : null}
    </form>
  );
}

export function RevokeTokenForm({ id, name }: { id: number; name: string }) {
  const [state, action, pending] = useActionState(revokeTokenAction, {});
  return (
    <form action={action} aria-label={`Revoke ${name}`}>
      <input type="hidden" name="id" value={id} />
      <Message state={state} />
      <button type="submit" className="btn btn-danger" disabled={pending}>Revoke</button>
    </form>
  );
}
