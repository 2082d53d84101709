"use client";

import { parseAsString, useQueryState } from "nuqs";

/**
 * A page's own choice beside the filter bar (Live's "also show ended", Events'
 * deliveries, Sync's status), kept in the URL under `name` and applied at once like
 * every filter (no Apply button): the server page renders again from the URL.
 * Choosing `fallback` removes the parameter.
 */
export function UrlChoice({ id, name, label, fallback, choices }: { id: string; name: string; label: string; fallback: string | number; choices: ReadonlyArray<{ value: string | number; label: string }> }) {
  const [value, setValue] = useQueryState(name, parseAsString.withOptions({ shallow: false, history: "push", scroll: false }));
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} value={value ?? String(fallback)} onChange={(e) => void setValue(e.target.value === String(fallback) ? null : e.target.value)}>
        {choices.map((c) => (
          <option key={String(c.value)} value={String(c.value)}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}
