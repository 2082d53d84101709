import type { ReactNode } from "react";
import { withBasePath } from "@/lib/http/base-path";

/** A titled card with its actions (the CSV link) on the right. */
export function Panel({ id, title, actions, children, className }: { id: string; title: ReactNode; actions?: ReactNode; children: ReactNode; className?: string }) {
  return (
    <section className={`card panel ${className ?? ""}`} aria-labelledby={`${id}-title`} data-testid={`panel-${id}`}>
      <div className="panel-head">
        <h2 id={`${id}-title`}>{title}</h2>
        {actions ? <div className="panel-actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}

/** "Download CSV": the same API route and filters as what is shown, as a file. */
/** A CSV download; `children` names it where a panel has several (each link's text must differ). */
export function CsvLink({ href, what, children = "Download CSV", testId = "csv-link" }: { href: string; what: string; children?: ReactNode; testId?: string }) {
  return (
    <a className="csv-link" href={withBasePath(href)} download aria-label={`Download CSV of ${what}`} data-testid={testId}>
      {children}
    </a>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return (
    <p className="empty-state" role="status">
      {children}
    </p>
  );
}

export function ErrorState({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div className="error-state" role="alert">
      <span>Could not load this: {message}</span>
      {onRetry ? (
        <button type="button" className="btn btn-secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Skeleton({ height = 160, label = "Loading" }: { height?: number; label?: string }) {
  return <div className="skeleton" style={{ height }} aria-busy="true" aria-label={label} />;
}

/** The loading.tsx of a dashboard page: a title and grey blocks where the panels go. */
export function PageSkeleton({ title, blocks = 3 }: { title: string; blocks?: number }) {
  return (
    <main className="container dash">
      <h1>{title}</h1>
      <div className="skeleton filter-skeleton" aria-hidden="true" />
      {Array.from({ length: blocks }, (_, i) => (
        <Skeleton key={i} height={i === 0 ? 110 : 240} />
      ))}
    </main>
  );
}

/** Shown while a refetch after a filter change is under way. */
export function Refreshing({ active }: { active: boolean }) {
  return active ? (
    <span className="refreshing" role="status">
      Updating…
    </span>
  ) : null;
}
