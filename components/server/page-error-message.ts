import { HttpError } from "@/lib/http/errors";

/**
 * What a server page shows (through components/page-error.tsx) when its parameters are
 * wrong or an app is not visible: the HttpError's or zod issues' message, never
 * internals; null for anything else (the page's error boundary takes it).
 */
export function pageErrorMessage(error: unknown): string | null {
  if (error instanceof HttpError) return error.message;
  if (error && typeof error === "object" && "issues" in error && Array.isArray(error.issues)) {
    return error.issues.map((i: { path?: unknown[]; message?: string }) => `${(i.path ?? []).join(".") || "request"}: ${i.message}`).join("; ");
  }
  return null;
}
