declare module "parse-prometheus-text-format" {
  /** Prometheus text exposition to metric families (name, help, type, metrics). */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
