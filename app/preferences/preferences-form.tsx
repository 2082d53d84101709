"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { AppPicker, TimeZoneSelect, type AppOption } from "@/components/filter-bar";
import type { UserPreferences } from "@/lib/auth/preferences";

const BROWSER = "";

/** Saves the person's default zone and apps through PUT /api/v1/users/me/preferences. */
export function PreferencesForm({ apps, saved }: { apps: AppOption[]; saved: UserPreferences }) {
  const router = useRouter();
  const [zone, setZone] = useState(saved.timeZone ?? BROWSER);
  const [picked, setPicked] = useState(saved.apps);
  const [state, setState] = useState<{ ok?: string; error?: string }>({});
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      const res = await fetch("/api/v1/users/me/preferences", {
        method: "PUT",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ timeZone: zone === BROWSER ? null : zone, apps: picked }),
      });
      const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      if (!res.ok) setState({ error: body?.error?.message ?? `The server answered ${res.status}.` });
      else {
        setState({ ok: "Saved. Report pages opened from now on start with these." });
        // The layout hands the defaults to every page: read them again.
        router.refresh();
      }
    } catch {
      setState({ error: "The server could not be reached." });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card panel row-form" onSubmit={(e) => void submit(e)} aria-label="Your defaults" data-testid="preferences-form">
      <div className="field">
        <label htmlFor="pref-zone-mode">Start in</label>
        <select id="pref-zone-mode" value={zone === BROWSER ? "browser" : "zone"} onChange={(e) => setZone(e.target.value === "browser" ? BROWSER : "UTC")}>
          <option value="browser">My browser&apos;s time zone</option>
          <option value="zone">This time zone…</option>
        </select>
      </div>
      {zone !== BROWSER ? <TimeZoneSelect id="pref-zone" value={zone} onChange={setZone} /> : null}
      <AppPicker apps={apps} selected={picked} onChange={setPicked} />
      <button type="submit" className="btn" disabled={busy}>
        Save defaults
      </button>
      {state.ok ? <p role="status" className="muted">{state.ok}</p> : null}
      {state.error ? <p role="alert" className="alert">{state.error}</p> : null}
    </form>
  );
}
