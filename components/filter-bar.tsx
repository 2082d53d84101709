"use client";

import { useSearchParams } from "next/navigation";
import { useContext, useEffect, useId, useRef, useState, useSyncExternalStore, type FormEvent, type ReactNode } from "react";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "@/lib/analytics/dims";
import { MAX_YEAR, MIN_YEAR, PRESETS, dateInputProblem, endDateInput, fromDateInput, matchPreset, presetRange, toDateInput, toEndDateInput, type PresetKey } from "@/lib/ui/date-range";
import { hasActiveFilters, type FilterValues } from "@/lib/ui/filter-params";
import { label } from "@/lib/platform/labels";
import { PreferencesContext } from "./preferences";
import { SavedViews } from "./saved-views";
import { useFilters } from "./use-report";

export interface AppOption {
  appId: string;
  name: string;
}

/** The filters a page offers: every one (analytics pages), or a subset (the ops pages: apps, period, zone). */
export type FilterField = "app" | "call" | "period" | "tz";
const ALL_FIELDS: readonly FilterField[] = ["app", "call", "period", "tz"];

/**
 * Every filter of the model, in the URL. Any change goes back to page 1. Text and
 * number fields apply on Enter or when they lose focus (no request per keystroke).
 * `fields` picks which filters show (same controls, same URL names everywhere);
 * `serverRendered`: the page renders on the server from the URL (the ops pages), so a
 * change asks the server again. `children`: the page's own choices, after the filters.
 */
export function FilterBar({ apps, fields = ALL_FIELDS, serverRendered = false, children }: { apps: AppOption[]; fields?: readonly FilterField[]; serverRendered?: boolean; children?: ReactNode }) {
  const [v, setValues] = useFilters({ shallow: !serverRendered });
  const set = (patch: Partial<{ [K in keyof FilterValues]: FilterValues[K] | null }>) => void setValues({ ...patch, page: null });
  const id = useId();
  const show = (f: FilterField) => fields.includes(f);
  const [expanded, setExpanded] = useState(false);
  const activeCount = countActive(v);
  const startZone = useStartFilters(show("tz"), (patch) => void setValues(show("app") ? patch : { tz: patch.tz }, { history: "replace" }));

  return (
    <form className="filter-bar" aria-label="Filters" onSubmit={(e: FormEvent) => e.preventDefault()} data-testid="filter-bar" data-expanded={expanded}>
      {/* On a phone the filters fold behind this button, so the report starts on the first screen (globals.css). */}
      <button type="button" className="btn btn-secondary filter-toggle" aria-expanded={expanded} aria-controls={`${id}-fields`} onClick={() => setExpanded(!expanded)}>
        {expanded ? "Hide filters" : `Filters${activeCount ? ` (${activeCount} set)` : ""}`}
      </button>
      <div className="filter-fields" id={`${id}-fields`}>
      {show("app") ? <AppPicker apps={apps} selected={v.app} onChange={(app) => set({ app: app.length ? app : null })} /> : null}
      {show("call") ? <CallFilters id={id} v={v} set={set} /> : null}
      {show("call") ? <RunningHoursChip v={v} onRemove={() => set({ weekday: null, hour: null })} /> : null}
      {show("period") ? <DateRange id={id} values={v} onChange={(r) => set(r)} /> : null}
      {show("tz") ? <TimeZoneSelect id={`${id}-tz`} value={v.tz} onChange={(tz) => set({ tz, ...sameRangeIn(v, tz) })} /> : null}
      {children}
      <SavedViews />
      {hasActiveFilters(v, startZone) ? (
        <button
          type="button"
          className="btn btn-secondary filter-reset"
          onClick={() =>
            void setValues({ app: null, type: null, mode: null, status: null, receiverType: null, hasRecording: null, uid: null, participantsCount: null, weekday: null, hour: null, from: null, to: null, tz: startZone, page: null })
          }
        >
          Clear filters
        </button>
      ) : null}
      </div>
    </form>
  );
}

/** How many filters are set (the phone's folded bar says so). */
function countActive(v: FilterValues): number {
  return [v.app.length > 0, v.type, v.mode, v.status, v.receiverType, v.hasRecording, v.uid, v.participantsCount, v.weekday ?? v.hour, v.from ?? v.to].filter((x) => x !== null && x !== false).length;
}

/**
 * The period in another zone: a preset stays that preset (Last 90 days in Kolkata's days),
 * custom dates stay the same calendar dates; all time stays all time.
 */
function sameRangeIn(v: FilterValues, tz: string): { from: number | null; to: number | null } {
  const now = Math.floor(Date.now() / 1000);
  const preset = matchPreset(v, now, v.tz);
  if (preset === "all") return { from: v.from, to: v.to };
  if (preset !== "custom") return presetRange(preset, now, tz);
  return { from: fromDateInput(toDateInput(v.from, v.tz), tz), to: endDateInput(toEndDateInput(v.to, v.tz), tz) };
}

/**
 * Where a page starts when its URL names no zone (a page opened from a bookmark, the
 * header, a fresh tab): the person's saved default zone, else the browser's, and their
 * saved default apps when the URL names none either. Put in the URL (replacing the history
 * entry), so the page, its links and a shared URL all say which zone the numbers are in.
 * Returns that zone (what Clear goes back to).
 */
function useStartFilters(enabled: boolean, start: (patch: { tz: string; app?: string[] }) => void): string {
  const saved = useContext(PreferencesContext);
  const zones = useSyncExternalStore(subscribeNever, browserZones, () => null);
  const zone = saved.tz ?? zones?.browser ?? "UTC";
  const searchParams = useSearchParams();
  const named = searchParams.has("tz");
  const appsNamed = searchParams.has("app");
  const defaultApps = saved.apps.join(",");
  useEffect(() => {
    if (!enabled || named || zones === null) return;
    const apps = !appsNamed && defaultApps ? defaultApps.split(",") : undefined;
    if (zone !== "UTC" || apps) start({ tz: zone, ...(apps ? { app: apps } : {}) });
    // `start` is a fresh closure each render; the URL and the defaults are what matter.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [enabled, named, appsNamed, zone, zones, defaultApps]);
  return zone;
}

const WEEKDAY_NAMES = ["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"];

/** "Mondays 10:00–11:00", "Mondays", "10:00–11:00 every day": the weekday/hour filter in words. */
export function runningHoursLabel(weekday: number | null, hour: number | null): string {
  const hours = hour === null ? null : `${String(hour).padStart(2, "0")}:00–${String((hour + 1) % 24).padStart(2, "0")}:00`;
  if (weekday === null) return `${hours} every day`;
  return hours === null ? WEEKDAY_NAMES[weekday] : `${WEEKDAY_NAMES[weekday]} ${hours}`;
}

/**
 * The heatmap drill-down's filter (weekday / hour), set by a click on a cell and shown
 * only while set: one chip saying what it keeps, which removes it. No field of its own: a
 * person picks a cell on the heatmap rather than typing a weekday.
 */
function RunningHoursChip({ v, onRemove }: { v: FilterValues; onRemove: () => void }) {
  if (v.weekday === null && v.hour === null) return null;
  const what = `Calls running ${runningHoursLabel(v.weekday, v.hour)} (${v.tz})`;
  return (
    <div className="field filter-chip" data-testid="running-hours-filter">
      <span className="filter-chip-label">Busy hour</span>
      <button type="button" className="btn btn-secondary" onClick={onRemove} aria-label={`Remove filter: ${what}`} title={`${what}. Remove this filter.`}>
        {runningHoursLabel(v.weekday, v.hour)} <span aria-hidden="true">×</span>
      </button>
    </div>
  );
}

type SetFilters = (patch: Partial<{ [K in keyof FilterValues]: FilterValues[K] | null }>) => void;

/** The filters on a call's own fields (the analytics pages). */
function CallFilters({ id, v, set }: { id: string; v: FilterValues; set: SetFilters }) {
  return (
    <>
      <Choice id={`${id}-type`} name="type" text="Type" value={v.type} values={TYPES} onChange={(type) => set({ type })} />
      <Choice id={`${id}-mode`} name="mode" text="Mode" value={v.mode} values={MODES} onChange={(mode) => set({ mode })} />
      <Choice id={`${id}-status`} name="status" text="Status" value={v.status} values={STATUSES} onChange={(status) => set({ status })} />
      <Choice id={`${id}-rt`} name="receiverType" text="Receiver" value={v.receiverType} values={RECEIVER_TYPES} onChange={(receiverType) => set({ receiverType })} />
      <Choice id={`${id}-rec`} name="hasRecording" text="Recording" value={v.hasRecording} values={["true", "false"] as const} labels={{ true: "Recorded (flag or link)", false: "Not recorded" }} onChange={(hasRecording) => set({ hasRecording })} />
      <TextField id={`${id}-uid`} name="uid" text="Participant uid" value={v.uid ?? ""} onCommit={(uid) => set({ uid: uid.trim() || null })} />
      <TextField
        id={`${id}-pc`}
        name="participantsCount"
        text="Participants"
        inputMode="numeric"
        width={7}
        value={v.participantsCount === null ? "" : String(v.participantsCount)}
        onCommit={(s) => set({ participantsCount: /^\d{1,6}$/.test(s.trim()) ? Number(s.trim()) : null })}
      />
    </>
  );
}

function Choice<T extends string>({ id, name, text, value, values, labels, onChange }: { id: string; name: string; text: string; value: T | null; values: readonly T[]; labels?: Partial<Record<T, string>>; onChange: (v: T | null) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>{text}</label>
      <FilterSelect id={id} name={name} value={value ?? ""} onChange={(v) => onChange(v === "" ? null : (v as T))}>
        <option value="">All</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {labels?.[v] ?? label(v)}
          </option>
        ))}
      </FilterSelect>
    </div>
  );
}

function TextField({ id, name, text, value, onCommit, inputMode, width }: { id: string; name: string; text: string; value: string; onCommit: (v: string) => void; inputMode?: "numeric"; width?: number }) {
  const [draft, setDraft] = useState(value);
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    // The URL changed (back button, Clear): show its value.
    setSeen(value);
    setDraft(value);
  }
  const commit = () => {
    if (draft !== value) onCommit(draft);
  };
  return (
    <div className="field">
      <label htmlFor={id}>{text}</label>
      <input
        id={id}
        name={name}
        type="search"
        inputMode={inputMode}
        size={width ?? 14}
        value={draft}
        placeholder="Any"
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            commit();
          }
        }}
      />
    </div>
  );
}

/** The tenant apps to include (none checked: all). Closes on a click outside it and on Escape, like a select. */
export function AppPicker({ apps, selected, onChange }: { apps: AppOption[]; selected: string[]; onChange: (apps: string[]) => void }) {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    const close = (focusSummary: boolean) => {
      const el = ref.current;
      if (!el?.open) return;
      el.open = false;
      if (focusSummary) el.querySelector("summary")?.focus();
    };
    const onPointer = (e: PointerEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) close(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && ref.current?.open) {
        e.preventDefault();
        close(ref.current.contains(document.activeElement));
      }
    };
    const onFocus = (e: FocusEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", onPointer);
    document.addEventListener("keydown", onKey);
    document.addEventListener("focusin", onFocus);
    return () => {
      document.removeEventListener("pointerdown", onPointer);
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("focusin", onFocus);
    };
  }, []);
  const summary = selected.length === 0 ? "All apps" : selected.length === 1 ? (apps.find((a) => a.appId === selected[0])?.name ?? selected[0]) : `${selected.length} apps`;
  return (
    <div className="field">
      <span className="field-label" id="app-picker-label">
        Apps
      </span>
      <details ref={ref} className="multi-select" data-testid="app-picker">
        <summary aria-labelledby="app-picker-label app-picker-value">
          <span id="app-picker-value">{summary}</span>
        </summary>
        <fieldset>
          <legend className="sr-only">Tenant apps to include</legend>
          {apps.map((a) => (
            <label key={a.appId}>
              <input
                type="checkbox"
                name="app"
                value={a.appId}
                checked={selected.includes(a.appId)}
                onChange={(e) => onChange(e.target.checked ? [...selected, a.appId] : selected.filter((s) => s !== a.appId))}
              />
              {a.name} <span className="muted">{a.appId}</span>
            </label>
          ))}
          {apps.length === 0 ? <span className="muted">No app to choose.</span> : null}
        </fieldset>
      </details>
    </div>
  );
}

function DateRange({ id, values, onChange }: { id: string; values: FilterValues; onChange: (r: { from: number | null; to: number | null }) => void }) {
  const tz = values.tz;
  const now = useSyncExternalStore(subscribeNever, nowToTheMinute, () => null);
  // On the server (no clock shared with the browser) a set range reads as custom until hydrated.
  const current = now === null ? (values.from === null && values.to === null ? "all" : "custom") : matchPreset(values, now, tz);
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-range`}>Period</label>
        <FilterSelect
          id={`${id}-range`}
          name="range"
          value={current}
          onChange={(key) => {
            if (key === "all") onChange({ from: null, to: null });
            else if (key !== "custom") onChange(presetRange(key as PresetKey, Math.floor(Date.now() / 1000), tz));
          }}
        >
          <option value="all">All time</option>
          {PRESETS.map((p) => (
            <option key={p.key} value={p.key}>
              {p.label}
            </option>
          ))}
          <option value="custom">Custom</option>
        </FilterSelect>
      </div>
      <DateField
        id={`${id}-from`}
        name="from"
        text="From"
        value={toDateInput(values.from, tz)}
        onCommit={(day) => {
          const from = fromDateInput(day, tz);
          if (from !== null && values.to !== null && from >= values.to) return "From must be on or before To.";
          onChange({ from, to: values.to });
          return null;
        }}
      />
      <DateField
        id={`${id}-to`}
        name="to"
        text="To"
        value={toEndDateInput(values.to, tz)}
        onCommit={(day) => {
          const to = endDateInput(day, tz);
          if (to !== null && values.from !== null && to <= values.from) return "To must be on or after From.";
          onChange({ from: values.from, to });
          return null;
        }}
      />
    </>
  );
}

/**
 * A date the person picks or types. A picked date applies at once; a typed one applies
 * when it is whole and plausible (Chromium reports every keystroke of the year: "0002",
 * "0020", "0202", "2026", and each would be a request), else on leaving the field or
 * Enter, where a date that cannot be used is refused in the field with the reason and
 * nothing is asked of the server. `onCommit` answers a refusal of its own (order).
 */
function DateField({ id, name, text, value, onCommit }: { id: string; name: string; text: string; value: string; onCommit: (day: string) => string | null }) {
  const [draft, setDraft] = useState(value);
  const [problem, setProblem] = useState<string | null>(null);
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    // The URL changed (a preset, Back, Clear): show its date; whatever was refused is gone with it.
    setSeen(value);
    setDraft(value);
    setProblem(null);
  }
  const errorId = `${id}-error`;
  const tryCommit = (input: HTMLInputElement, finished: boolean) => {
    const why = dateInputProblem(input.value, input.validity.badInput);
    if (why !== null) {
      // Mid-typing a partial year is normal: say so only once the person is done.
      if (finished) setProblem(why);
      return;
    }
    if (input.value === value) {
      setProblem(null);
      return;
    }
    setProblem(onCommit(input.value));
  };
  return (
    <div className="field">
      <label htmlFor={id}>{text}</label>
      <input
        id={id}
        name={name}
        type="date"
        min={`${MIN_YEAR}-01-01`}
        max={`${MAX_YEAR}-12-31`}
        value={draft}
        aria-invalid={problem !== null}
        aria-describedby={problem !== null ? errorId : undefined}
        onChange={(e) => {
          setDraft(e.currentTarget.value);
          tryCommit(e.currentTarget, false);
        }}
        onBlur={(e) => tryCommit(e.currentTarget, true)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            tryCommit(e.currentTarget, true);
          }
        }}
      />
      {problem !== null ? (
        <span id={errorId} className="field-error" role="alert" data-testid={`${name}-error`}>
          {problem}
        </span>
      ) : null}
    </div>
  );
}

/** An IANA zone: UTC, the browser's, and every zone the runtime lists. */
export function TimeZoneSelect({ id, value, onChange }: { id: string; value: string; onChange: (tz: string) => void }) {
  // The zone list and the browser's zone are known only in the browser: filled after
  // mount so the server's HTML and the first client render agree.
  const zones = useSyncExternalStore(subscribeNever, browserZones, () => null);
  const options = new Set<string>(["UTC", value, ...(zones ? [zones.browser, ...zones.all] : [])]);
  return (
    <div className="field">
      <label htmlFor={id}>Time zone</label>
      <FilterSelect id={id} name="tz" value={value} onChange={onChange} className="tz-select">
        {zones && zones.browser !== "UTC" ? <option value={zones.browser}>{zones.browser} (this browser)</option> : null}
        {[...options]
          .filter((z) => !(zones && z === zones.browser && z !== "UTC"))
          .map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
      </FilterSelect>
    </div>
  );
}

/** Keys that move through a closed select's options (Chromium changes the value on each). */
const OPTION_KEYS = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]);
/** How long the keyboard may rest on an option before it applies. */
const KEY_SETTLE_MS = 900;

/**
 * A select that applies a click at once but not every option the arrow keys pass over
 * (each would be a request and a history entry): a choice made with the keys applies on
 * Enter, on leaving the field, or once the keys rest for a moment.
 */
function FilterSelect({ id, name, value, onChange, className, children }: { id: string; name: string; value: string; onChange: (v: string) => void; className?: string; children: ReactNode }) {
  const [pending, setPending] = useState<string | null>(null);
  const byKeys = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const apply = (v: string | null) => {
    clearTimeout(timer.current);
    setPending(null);
    if (v !== null && v !== value) onChange(v);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  return (
    <select
      id={id}
      name={name}
      className={className}
      value={pending ?? value}
      onKeyDown={(e) => {
        byKeys.current = OPTION_KEYS.has(e.key);
        if (e.key === "Enter" && pending !== null) {
          e.preventDefault();
          apply(pending);
        }
      }}
      onChange={(e) => {
        const v = e.target.value;
        if (!byKeys.current) return apply(v);
        setPending(v);
        clearTimeout(timer.current);
        timer.current = setTimeout(() => apply(v), KEY_SETTLE_MS);
      }}
      onBlur={() => {
        if (pending !== null) apply(pending);
      }}
      onPointerDown={() => {
        byKeys.current = false;
      }}
    >
      {children}
    </select>
  );
}

const subscribeNever = () => () => {};

/** Epoch seconds, stable within a minute (a snapshot must not change on every read). */
function nowToTheMinute(): number {
  return Math.floor(Date.now() / 60_000) * 60;
}

/**
 * Current IANA names that some ICU builds list only under their old alias (Chromium
 * offers Asia/Calcutta, not Asia/Kolkata): offered too, when the runtime accepts them.
 */
const CURRENT_NAMES = ["Asia/Kolkata", "Asia/Kathmandu", "Europe/Kyiv", "Asia/Ho_Chi_Minh", "Asia/Yangon", "America/Nuuk", "Pacific/Kanton"];

function acceptedZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

let zoneCache: { browser: string; all: string[] } | undefined;
function browserZones(): { browser: string; all: string[] } {
  const listed = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  zoneCache ??= {
    browser: Intl.DateTimeFormat().resolvedOptions().timeZone,
    all: [...new Set([...listed, ...CURRENT_NAMES.filter(acceptedZone)])].sort(),
  };
  return zoneCache;
}
