import { withBasePath } from "@/lib/http/base-path";

/** GET a JSON route (an app path: the base path is added); throws its `{error: {message}}` as an Error. */
export async function fetchJson<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(withBasePath(url), { ...init, headers: { accept: "application/json", ...init?.headers }, cache: "no-store" });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const message =
      body && typeof body === "object" && "error" in body && body.error && typeof body.error === "object" && "message" in body.error
        ? String(body.error.message)
        : `The server answered ${res.status}.`;
    throw new Error(message);
  }
  return body as T;
}
