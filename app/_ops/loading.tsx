/** The loading state of an operations page while its server part renders. */
export function OpsLoading({ title }: { title: string }) {
  return (
    <main id="main" tabIndex={-1} className="container" aria-busy="true">
      <h1>{title}</h1>
      <p className="muted" role="status">Loading…</p>
      <div className="stack">
        <div className="ops-skeleton" />
        <div className="ops-skeleton" style={{ height: 200 }} />
      </div>
    </main>
  );
}
