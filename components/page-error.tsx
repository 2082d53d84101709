"use client";

import { ErrorState } from "./panel";

/** The error.tsx of a dashboard page: what went wrong, and a way to try again. */
export function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="container dash">
      <h1>Something went wrong</h1>
      <ErrorState message={error.digest ? `a server error (reference ${error.digest})` : error.message} onRetry={reset} />
    </main>
  );
}
