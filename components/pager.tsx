import Link from "next/link";
import type { ReactNode } from "react";
import { formatCount } from "@/lib/ui/format";

/**
 * The report tables' pager: First, Previous, "Page n of m · rows", Next, Last. `Pager`
 * changes the page in the browser (the paged tables' URL state); `LinkPager` is the same
 * pager as links, for a page rendered on the server (Events), so both look and read alike.
 */
function PagerFrame({ page, last, total, label, step }: { page: number; last: number; total?: number; label: string; step: (to: number, text: string, enabled: boolean) => ReactNode }) {
  return (
    <nav className="pager" aria-label={label}>
      {step(1, "First", page > 1)}
      {step(page - 1, "Previous", page > 1)}
      <span data-testid="page-status">
        Page {formatCount(page)} of {formatCount(last)}
        {total !== undefined ? <span className="muted"> · {formatCount(total)} {total === 1 ? "row" : "rows"}</span> : null}
      </span>
      {step(page + 1, "Next", page < last)}
      {step(last, "Last", page < last)}
    </nav>
  );
}

export function Pager({ page, pageCount, total, onPage, label = "Pages" }: { page: number; pageCount: number; total?: number; onPage: (p: number) => void; label?: string }) {
  return (
    <PagerFrame
      page={page}
      last={Math.max(1, pageCount)}
      total={total}
      label={label}
      step={(to, text, enabled) => (
        <button type="button" className="btn btn-secondary" onClick={() => onPage(to)} disabled={!enabled}>
          {text}
        </button>
      )}
    />
  );
}

export function LinkPager({ page, pageCount, total, href, label = "Pages" }: { page: number; pageCount: number; total?: number; href: (p: number) => string; label?: string }) {
  return (
    <PagerFrame
      page={page}
      last={Math.max(1, pageCount)}
      total={total}
      label={label}
      step={(to, text, enabled) =>
        enabled ? (
          <Link className="btn btn-secondary" href={href(to)}>
            {text}
          </Link>
        ) : (
          <span className="btn btn-secondary" aria-disabled="true">
            {text}
          </span>
        )
      }
    />
  );
}
