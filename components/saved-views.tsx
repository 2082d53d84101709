"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useId, useState } from "react";
import type { SavedView } from "@/lib/auth/saved-views";
import { carriedFilters, withFilters } from "@/lib/ui/carry";
import { fetchJson } from "@/lib/ui/fetch-json";

const VIEWS_KEY = ["saved-views"] as const;

async function send(url: string, method: "POST" | "DELETE", body?: unknown): Promise<void> {
  const res = await fetch(url, { method, headers: { "content-type": "application/json", accept: "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    const answer = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new Error(answer?.error?.message ?? `The server answered ${res.status}.`);
  }
}

/**
 * Saved views beside the filters: open one (its page with its filters), save the
 * filters on screen under a name (for oneself, or shared with every user), remove one's own.
 */
export function SavedViews() {
  const id = useId();
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const client = useQueryClient();
  const views = useQuery({ queryKey: VIEWS_KEY, queryFn: ({ signal }) => fetchJson<{ data: SavedView[] }>("/api/v1/views", { signal }) });
  const [saving, setSaving] = useState(false);
  const [name, setName] = useState("");
  const [shared, setShared] = useState(false);
  const query = carriedFilters(new URLSearchParams(search.toString())).toString();
  const here = (views.data?.data ?? []).find((v) => v.path === pathname && v.query === query);
  const save = useMutation({
    mutationFn: () => send("/api/v1/views", "POST", { name, path: pathname, query, shared }),
    onSuccess: () => {
      setSaving(false);
      setName("");
      setShared(false);
      void client.invalidateQueries({ queryKey: VIEWS_KEY });
    },
  });
  const remove = useMutation({
    mutationFn: (view: SavedView) => send(`/api/v1/views/${view.id}`, "DELETE"),
    onSuccess: () => void client.invalidateQueries({ queryKey: VIEWS_KEY }),
  });
  const list = views.data?.data ?? [];
  return (
    <div className="field saved-views" data-testid="saved-views">
      <label htmlFor={`${id}-view`}>Saved view</label>
      <div className="saved-views-row">
        <select
          id={`${id}-view`}
          value={here ? String(here.id) : ""}
          onChange={(e) => {
            const view = list.find((v) => String(v.id) === e.target.value);
            if (view) router.push(withFilters(view.path, new URLSearchParams(view.query)));
          }}
        >
          <option value="">{list.length ? "Choose…" : "None yet"}</option>
          {list.map((v) => (
            <option key={v.id} value={v.id}>
              {v.name}
              {v.mine ? (v.shared ? " (shared)" : "") : ` (by ${v.owner})`}
            </option>
          ))}
        </select>
        {here?.mine ? (
          <button type="button" className="btn btn-secondary" onClick={() => remove.mutate(here)} disabled={remove.isPending}>
            Remove view
          </button>
        ) : (
          <button type="button" className="btn btn-secondary" aria-expanded={saving} onClick={() => setSaving(!saving)}>
            Save view…
          </button>
        )}
      </div>
      {saving ? (
        <div className="saved-views-form" role="group" aria-label="Save these filters as a view">
          <label htmlFor={`${id}-name`}>Name</label>
          <input
            id={`${id}-name`}
            value={name}
            maxLength={80}
            onChange={(e) => setName(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                if (name.trim()) save.mutate();
              }
            }}
          />
          <label className="inline-field">
            <input type="checkbox" checked={shared} onChange={(e) => setShared(e.target.checked)} /> Share with every user
          </label>
          <button type="button" className="btn" disabled={!name.trim() || save.isPending} onClick={() => save.mutate()}>
            Save
          </button>
        </div>
      ) : null}
      {save.isError || remove.isError ? (
        <span className="field-error" role="alert">
          {(save.error ?? remove.error)?.message}
        </span>
      ) : null}
    </div>
  );
}
