import { withBasePath } from "@/lib/http/base-path";

/** A route's refusal: the HTTP status and the `{error: {message}}` it gave. */
export class FetchError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * The dashboard's one way to call its own API, reports and ops routes alike: an app
 * path (the base path is added), JSON asked for, never cached; a refusal's
 * `{error: {message}}` becomes a FetchError with the status. Client-safe.
 */
export async function fetchJson<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(withBasePath(url), { ...init, headers: { accept: "application/json", ...init?.headers }, cache: "no-store" });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const err = body && typeof body === "object" && "error" in body ? (body as { error?: { message?: unknown } }).error : undefined;
    throw new FetchError(typeof err?.message === "string" ? err.message : `The server answered ${res.status}.`, res.status);
  }
  return body as T;
}
