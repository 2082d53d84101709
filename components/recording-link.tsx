import type { ReactNode } from "react";
import { httpUrlOrNull } from "@/lib/http/link-url";

/**
 * A recording's address as a link, only when it is http(s). The ingest refuses any
 * other scheme, but a warehouse may hold rows stored before it did: those show as
 * text, never as a `javascript:` or `data:` link.
 */
export function RecordingLink({ url, children }: { url: string; children: ReactNode }) {
  const href = httpUrlOrNull(url);
  if (href === null) {
    return (
      <span className="muted" data-testid="unsafe-recording-url" title="Not an http(s) address, so not shown as a link">
        No safe link
      </span>
    );
  }
  return (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  );
}
