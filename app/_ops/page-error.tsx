import { HttpError } from "@/lib/http/errors";
import { withBasePath } from "@/lib/http/base-path";

/** What a page shows when its parameters are wrong or an app is not visible: the message, never internals. */
export function pageErrorMessage(error: unknown): string | null {
  if (error instanceof HttpError) return error.message;
  if (error && typeof error === "object" && "issues" in error && Array.isArray(error.issues)) {
    return error.issues.map((i: { path?: unknown[]; message?: string }) => `${(i.path ?? []).join(".") || "request"}: ${i.message}`).join("; ");
  }
  return null;
}

export function PageError({ title, message, resetHref, resetLabel = "Show everything instead" }: { title: string; message: string; resetHref: string; resetLabel?: string }) {
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>{title}</h1>
      <div className="card stack">
        <p className="alert" role="alert">{message}</p>
        <p><a href={withBasePath(resetHref)}>{resetLabel}</a></p>
      </div>
    </main>
  );
}
