/**
 * The rule form's fields (strings, as inputs hold them) and the JSON body the alerts API
 * takes: pure mappers both ways, shared by the create and the edit form.
 */
import type { RuleView } from "@/lib/alerts/rules";
import type { Metric } from "@/lib/alerts/schema";

export interface RuleForm {
  name: string;
  enabled: boolean;
  metric: Metric;
  windowSeconds: string;
  op: "above" | "below" | "change";
  value: string;
  percent: string;
  direction: "up" | "down" | "either";
  minCalls: string;
  apps: string[];
  type: string;
  mode: string;
  status: string;
  receiverType: string;
  hasRecording: "" | "true" | "false";
  uid: string;
  participantsCount: string;
  /** Blank when editing: the stored URL (a credential) is never sent back, blank keeps it. */
  destinationUrl: string;
  allowPrivate: boolean;
  removeDestination: boolean;
}

export const EMPTY_FORM: RuleForm = {
  name: "", enabled: true, metric: "unansweredRate", windowSeconds: "900", op: "above", value: "20", percent: "50", direction: "either",
  minCalls: "10", apps: [], type: "", mode: "", status: "", receiverType: "", hasRecording: "", uid: "", participantsCount: "",
  destinationUrl: "", allowPrivate: false, removeDestination: false,
};

export function ruleToForm(r: RuleView): RuleForm {
  const f = r.filters;
  return {
    ...EMPTY_FORM,
    name: r.name, enabled: r.enabled, metric: r.metric, windowSeconds: String(r.windowSeconds), op: r.condition.op,
    value: r.condition.op === "change" ? EMPTY_FORM.value : String(r.condition.value),
    percent: r.condition.op === "change" ? String(r.condition.percent) : EMPTY_FORM.percent,
    direction: r.condition.op === "change" ? r.condition.direction : "either",
    minCalls: String(r.minCalls), apps: f.app ?? [], type: f.type ?? "", mode: f.mode ?? "", status: f.status ?? "",
    receiverType: f.receiverType ?? "", hasRecording: f.hasRecording === undefined ? "" : f.hasRecording ? "true" : "false",
    uid: f.uid ?? "", participantsCount: f.participantsCount === undefined ? "" : String(f.participantsCount),
    allowPrivate: r.destination?.allowPrivate ?? false,
  };
}

/** A number field: the number, or the text itself so that the API names the field in its 400. */
const numberOf = (s: string): number | string => (s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : s);

/** The API body of the form. Editing leaves the destination out when its URL is blank (kept as stored). */
export function formToBody(form: RuleForm, editing: boolean): Record<string, unknown> {
  // Loosely typed on purpose: a half-typed number goes to the API as typed, which names the field.
  const filters: Record<string, unknown> = {};
  if (form.apps.length) filters.app = form.apps;
  for (const key of ["type", "mode", "status", "receiverType", "uid"] as const) if (form[key].trim() !== "") filters[key] = form[key].trim();
  if (form.hasRecording) filters.hasRecording = form.hasRecording === "true";
  if (form.participantsCount.trim() !== "") filters.participantsCount = numberOf(form.participantsCount);
  const body: Record<string, unknown> = {
    name: form.name,
    enabled: form.enabled,
    metric: form.metric,
    windowSeconds: numberOf(form.windowSeconds),
    condition: form.op === "change" ? { op: "change", percent: numberOf(form.percent), direction: form.direction } : { op: form.op, value: numberOf(form.value) },
    minCalls: numberOf(form.minCalls === "" ? "0" : form.minCalls),
    filters,
  };
  if (form.removeDestination) body.destination = null;
  else if (form.destinationUrl.trim() !== "") body.destination = { url: form.destinationUrl.trim(), allowPrivate: form.allowPrivate };
  else if (!editing) body.destination = null;
  return body;
}
