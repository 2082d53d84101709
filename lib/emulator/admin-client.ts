// Typed HTTP client of the /__emulator controls, for tests (in-process or spawned).
import type { FaultConfig } from "./faults";
import type { AppInfo, EmulatorAppSpec, EmulatorQuirks, RequestLogEntry } from "./state";
import type { AdvanceOptions, AdvanceResult } from "./store";
import type { CallRecord, WireCall } from "./types";

export interface EmulatorAdmin {
  state(): Promise<{ seed: number; now: number; apps: (AppInfo & { clock: number })[]; quirks: EmulatorQuirks }>;
  setFaults(config: FaultConfig): Promise<void>;
  clearFaults(): Promise<void>;
  faults(): Promise<FaultConfig & { fired: Record<string, number> }>;
  setQuirks(quirks: Partial<EmulatorQuirks>): Promise<EmulatorQuirks>;
  advance(options: AdvanceOptions & { appId?: string }): Promise<Record<string, AdvanceResult>>;
  /** Every current record of the app, exactly as the list serves them, newest first. */
  truth(appId: string): Promise<WireCall[]>;
  call(appId: string, sessionId: string): Promise<{ data: WireCall; canonical: CallRecord }>;
  patchCall(appId: string, sessionId: string, change: { hasRecording?: boolean; end?: boolean }): Promise<{ data: WireCall; canonical: CallRecord }>;
  addApp(spec: EmulatorAppSpec): Promise<{ appId: string; apiKey: string; region: string; calls: number }>;
  removeApp(appId: string): Promise<void>;
  requests(limit?: number): Promise<RequestLogEntry[]>;
  clearRequests(): Promise<void>;
  reset(): Promise<void>;
}

export function createAdminClient(baseUrl: string): EmulatorAdmin {
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${baseUrl}/__emulator${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await send(method, path, body);
    } catch (e) {
      // A kept-alive connection the emulator closed as idle just as it was reused (a busy
      // test process runs its keep-alive timer late): the request never reached it, so an
      // idempotent one is sent once more, on a new connection.
      if (method === "POST" || !closedUnderUs(e)) throw e;
      res = await send(method, path, body);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`emulator admin ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  const enc = encodeURIComponent;
  return {
    state: () => call("GET", "/state"),
    setFaults: async (config) => void (await call("PUT", "/faults", config)),
    clearFaults: async () => void (await call("DELETE", "/faults")),
    faults: () => call("GET", "/faults"),
    setQuirks: (quirks) => call("PUT", "/quirks", quirks),
    advance: async (options) => (await call<{ results: Record<string, AdvanceResult> }>("POST", "/advance", options)).results,
    truth: async (appId) => (await call<{ data: WireCall[] }>("GET", `/apps/${enc(appId)}/calls`)).data,
    call: (appId, sessionId) => call("GET", `/apps/${enc(appId)}/calls/${enc(sessionId)}`),
    patchCall: (appId, sessionId, change) => call("PATCH", `/apps/${enc(appId)}/calls/${enc(sessionId)}`, change),
    addApp: async (spec) => (await call<{ data: { appId: string; apiKey: string; region: string; calls: number } }>("POST", "/apps", spec)).data,
    removeApp: async (appId) => void (await call("DELETE", `/apps/${enc(appId)}`)),
    requests: async (limit) => (await call<{ data: RequestLogEntry[] }>("GET", `/requests${limit ? `?limit=${limit}` : ""}`)).data,
    clearRequests: async () => void (await call("DELETE", "/requests")),
    reset: async () => void (await call("POST", "/reset")),
  };
}

function closedUnderUs(e: unknown): boolean {
  const code = (e as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET";
}
