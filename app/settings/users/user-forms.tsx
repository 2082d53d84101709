"use client";

import { useActionState } from "react";
import type { ActionState } from "@/lib/auth/route-support";
import type { UserView } from "@/lib/auth/users";
import { createUserAction, removeUserAction, updateUserAction } from "./actions";

export interface AppOption {
  appId: string;
  name: string;
}

function Message({ state }: { state: ActionState }) {
  if (state.error) return <p className="alert" role="alert">{state.error}</p>;
  if (state.ok) return <p className="notice" role="status">{state.ok}</p>;
  return null;
}

function AppChecks({ apps, selected, idPrefix }: { apps: AppOption[]; selected: string[]; idPrefix: string }) {
  if (apps.length === 0) return <p className="muted">No tenant app registered yet.</p>;
  return (
    <fieldset>
      <legend>Apps (viewers see only these)</legend>
      <div className="checks">
        {apps.map((a) => (
          <label key={a.appId} htmlFor={`${idPrefix}-${a.appId}`}>
            <input id={`${idPrefix}-${a.appId}`} type="checkbox" name="apps" value={a.appId} defaultChecked={selected.includes(a.appId)} />
            {a.name} ({a.appId})
          </label>
        ))}
      </div>
    </fieldset>
  );
}

export function AddUserForm({ apps }: { apps: AppOption[] }) {
  const [state, action, pending] = useActionState(createUserAction, {});
  return (
    <form action={action} className="stack" aria-label="Add a user">
      <div className="row-form">
        <div className="field">
          <label htmlFor="new-email">Email</label>
          <input id="new-email" name="email" type="email" required autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor="new-password">Password (8+ characters)</label>
          <input id="new-password" name="password" type="password" required minLength={8} autoComplete="new-password" />
        </div>
        <div className="field">
          <label htmlFor="new-role">Role</label>
          <select id="new-role" name="role" defaultValue="viewer">
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </select>
        </div>
      </div>
      <AppChecks apps={apps} selected={[]} idPrefix="new-app" />
      <Message state={state} />
      <div>
        <button type="submit" className="btn" disabled={pending}>Add user</button>
      </div>
    </form>
  );
}

export function EditUserForm({ user, apps }: { user: UserView; apps: AppOption[] }) {
  const [state, action, pending] = useActionState(updateUserAction, {});
  const [removeState, removeAction, removing] = useActionState(removeUserAction, {});
  const p = `user-${user.id}`;
  return (
    <div className="stack">
      <form action={action} className="stack" aria-label={`Edit ${user.email}`}>
        <input type="hidden" name="id" value={user.id} />
        <div className="row-form">
          <div className="field">
            <label htmlFor={`${p}-role`}>Role</label>
            <select id={`${p}-role`} name="role" defaultValue={user.role}>
              <option value="viewer">viewer</option>
              <option value="admin">admin</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${p}-password`}>New password (leave empty to keep)</label>
            <input id={`${p}-password`} name="password" type="password" minLength={8} autoComplete="new-password" />
          </div>
          <div className="checks">
            <label htmlFor={`${p}-disabled`}>
              <input id={`${p}-disabled`} type="checkbox" name="disabled" defaultChecked={user.disabled} />
              Disabled
            </label>
          </div>
        </div>
        <AppChecks apps={apps} selected={user.apps} idPrefix={`${p}-app`} />
        <Message state={state} />
        <div>
          <button type="submit" className="btn btn-secondary" disabled={pending}>Save {user.email}</button>
        </div>
      </form>
      <form action={removeAction} aria-label={`Remove ${user.email}`}>
        <input type="hidden" name="id" value={user.id} />
        <Message state={removeState} />
        <button type="submit" className="btn btn-danger" disabled={removing}>Remove {user.email}</button>
      </form>
    </div>
  );
}
