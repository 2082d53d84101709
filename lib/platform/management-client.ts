import { PlatformAuthError, PlatformError, PlatformHttpError, describeDetail, platformErrorDetail } from "./errors";
import { describeRedirect, type FetchFn } from "./get-json";
import { assertRegion, type Region } from "./urls";

/**
 * Multi-tenancy: `POST {management_url}/apps` with headers `key` and `secret`, body
 * `{name, version, region}`. The seed does not show the answer, so we look for the app
 * id and API key at the top level or under `data`, under the spellings seen elsewhere.
 */
export interface ManagementCredentials {
  managementUrl: string;
  key: string;
  secret: string;
}

export interface CreateAppInput {
  name: string;
  version?: string;
  region: Region | string;
}

export interface CreatedApp {
  appId: string;
  apiKey: string | null;
  region: Region;
  raw: unknown;
}

const ID_KEYS = ["appId", "appid", "app_id", "id"];
const KEY_KEYS = ["apiKey", "apikey", "api_key", "restApiKey", "rest_api_key", "authKey"];

function pick(obj: unknown, keys: string[]): string | undefined {
  if (!obj || typeof obj !== "object") return undefined;
  const o = obj as Record<string, unknown>;
  for (const k of keys) {
    const v = o[k];
    if (typeof v === "string" && v.trim() !== "") return v.trim();
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

/** Finds `{appId, apiKey}` at the top level, under `data`, or under `data.app`. */
export function parseCreateAppAnswer(body: unknown): { appId?: string; apiKey?: string } {
  const data = body && typeof body === "object" ? (body as Record<string, unknown>).data : undefined;
  const app = data && typeof data === "object" ? (data as Record<string, unknown>).app : undefined;
  const candidates = [body, data, app];
  let appId: string | undefined;
  let apiKey: string | undefined;
  for (const c of candidates) {
    appId ??= pick(c, ID_KEYS);
    apiKey ??= pick(c, KEY_KEYS);
  }
  return { appId, apiKey };
}

export async function createApp(
  creds: ManagementCredentials,
  input: CreateAppInput,
  opts: { fetch?: FetchFn; timeoutMs?: number } = {},
): Promise<CreatedApp> {
  const region = assertRegion(input.region);
  if (!input.name || input.name.trim() === "") throw new PlatformError("createApp: name is required");
  const url = `${creds.managementUrl.replace(/\/+$/, "")}/apps`;
  const doFetch = opts.fetch ?? ((u, init) => fetch(u, init));
  let res: Response;
  try {
    res = await doFetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", accept: "application/json", key: creds.key, secret: creds.secret },
      body: JSON.stringify({ name: input.name.trim(), version: input.version ?? "1.0", region }),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
      // Never follow: fetch would send the key and secret headers to whatever a Location names.
      redirect: "manual",
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new PlatformError(`Management API unreachable: ${why}`);
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => undefined);
    throw new PlatformHttpError(`Management API ${describeRedirect(res, url)}`, { status: res.status });
  }
  const text = await res.text().catch(() => "");
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const detail = describeDetail(res.status, platformErrorDetail(body));
    if (res.status === 401 || res.status === 403) {
      throw new PlatformAuthError(`Management API refused the key/secret (${detail})`, { status: res.status });
    }
    throw new PlatformHttpError(`Management API could not create app "${input.name}" (${detail})`, { status: res.status });
  }
  if (body === undefined) throw new PlatformError(`Management API answered ${res.status} without a JSON body`);
  const { appId, apiKey } = parseCreateAppAnswer(body);
  if (!appId) {
    throw new PlatformError("Management API created the app but its answer has no app id (looked for appId, app_id, id at the top level and under data)");
  }
  return { appId, apiKey: apiKey ?? null, region, raw: body };
}
