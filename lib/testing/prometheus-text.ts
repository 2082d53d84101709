import parsePrometheusTextFormat from "parse-prometheus-text-format";

/**
 * Test support: a /metrics answer read with a real Prometheus text-format parser, as
 * samples (name, labels, value). The parser folds a histogram's series of every label set
 * into one; so histogram families are handed to it as untyped, which keeps each
 * `_bucket`, `_sum` and `_count` series apart with its labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string> }>;
}

export function parseMetrics(text: string): Sample[] {
  const families = parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped")) as Family[];
  return families.flatMap((f) => f.metrics.map((m) => ({ name: f.name, labels: m.labels ?? {}, value: Number(m.value) })));
}

/** The value of the one sample named `name` whose labels include `labels` (undefined: none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
