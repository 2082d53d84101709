"use client";

/** The error boundary of an operations page: a plain message and a retry, no internals. */
export function OpsError({ title, reset }: { title: string; reset: () => void }) {
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>{title}</h1>
      <div className="card stack">
        <p className="alert" role="alert">This page could not be loaded. The warehouse may be busy or unreachable.</p>
        <p>
          <button type="button" className="btn" onClick={reset}>Try again</button>
        </p>
      </div>
    </main>
  );
}
