"use client";

import { useEffect, useRef, useState } from "react";

/**
 * A new destination's signing secret, shown once: in its own panel above the form (which
 * has reset for the next rule), with a Copy button, until the person dismisses it — it
 * cannot be shown again, so it does not vanish on the next save or a refresh of the list.
 */
export function SecretPanel({ id, ruleName, secret, onDismiss }: { id: string; ruleName: string; secret: string; onDismiss: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const [copied, setCopied] = useState<"" | "ok" | "select">("");
  useEffect(() => {
    // The Create button sits below the form: bring the panel into view and read it out.
    heading.current?.focus();
  }, [secret]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("ok");
    } catch {
      // No clipboard (plain http, permission refused): select it for Ctrl+C instead.
      const el = document.getElementById(`${id}-value`);
      if (el) window.getSelection()?.selectAllChildren(el);
      setCopied("select");
    }
  };
  return (
    <section className="secret-panel" aria-labelledby={`${id}-title`} data-testid="alert-secret-panel">
      <h3 id={`${id}-title`} ref={heading} tabIndex={-1}>
        Signing secret of &ldquo;{ruleName}&rdquo;
      </h3>
      <p className="alerts-hint">
        Shown this once: store it where your receiver verifies the <code>webhook-signature</code> header. Saving the rule again keeps it; a new destination gets a new one.
      </p>
      <div className="ops-copy">
        <output id={`${id}-value`} className="secret-once" data-testid="alert-secret">
          {secret}
        </output>
        <button type="button" className="btn btn-secondary" onClick={() => void copy()} data-testid="copy-secret">
          Copy
        </button>
        <span role="status" className="alerts-hint" data-testid="copy-status">
          {copied === "ok" ? "Copied." : copied === "select" ? "Selected: press Ctrl+C." : ""}
        </span>
      </div>
      <button type="button" className="btn" onClick={onDismiss} data-testid="dismiss-secret">
        I have stored it
      </button>
    </section>
  );
}
