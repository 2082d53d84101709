"use client";

import { withBasePath } from "@/lib/http/base-path";

/**
 * A page that could not be shown, dashboard and ops pages alike: its title, what went
 * wrong (a message for people, never internals), and a way on — a retry (`onRetry`, an
 * error boundary's `reset`) or a link (`resetHref`, e.g. the page without its filters).
 * Server pages render it with plain strings; error.tsx files through `PageErrorBoundary`.
 */
export function PageError({ title, message, onRetry, resetHref = "/", resetLabel = "Show everything instead" }: { title: string; message: string; onRetry?: () => void; resetHref?: string; resetLabel?: string }) {
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>{title}</h1>
      <div className="card stack">
        <p className="alert" role="alert">{message}</p>
        <p>
          {onRetry ? (
            <button type="button" className="btn" onClick={onRetry}>
              Try again
            </button>
          ) : (
            <a href={withBasePath(resetHref)}>{resetLabel}</a>
          )}
        </p>
      </div>
    </main>
  );
}

/** What an ops page's error boundary says: its data is the warehouse's, the likely cause. */
export const WAREHOUSE_TROUBLE = "This page could not be loaded. The warehouse may be busy or unreachable.";

/**
 * The error.tsx of a page (Next's error boundary). `message`: what the page says whatever
 * the error (the ops pages: the warehouse is the likely cause); else the error's own
 * message, or in production (where Next hides a server error's) its reference.
 */
export function PageErrorBoundary({ title = "Something went wrong", message, error, reset }: { title?: string; message?: string; error: Error & { digest?: string }; reset: () => void }) {
  const shown = message ?? `Could not load this: ${error.digest ? `a server error (reference ${error.digest})` : error.message}`;
  return <PageError title={title} message={shown} onRetry={reset} />;
}
