/** A figure of an ops page's key-figures row. */
export function Kpi({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="ops-kpi">
      <span className="ops-kpi-label">{label}</span>
      <span className="ops-kpi-value" data-testid={testId}>{value}</span>
    </div>
  );
}
