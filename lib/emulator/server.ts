// The emulator's HTTP server: node:http on loopback, the platform's routes under
// /{appId}/v3 and /management, and test controls under /__emulator.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { handleAdmin } from "./admin-routes";
import type { FaultConfig, FaultKind } from "./faults";
import { loggableHeaders, pathSegments, sendError, sendText } from "./http-util";
import { authApp, checkOnBehalfOf, createApp, getCall, listPage } from "./platform-routes";
import type { DataMixName } from "./mixes";
import type { SessionIdOrder } from "./session-ids";
import { EmulatorState, type AppInfo, type EmulatorAppSpec, type EmulatorQuirks } from "./state";

export interface EmulatorOptions {
  /** Default 0: any free port. The server always binds 127.0.0.1. */
  port?: number;
  seed?: number;
  /** Epoch seconds the generated history ends at (default: now). */
  now?: number;
  months?: number;
  apps?: EmulatorAppSpec[];
  quirks?: Partial<EmulatorQuirks>;
  faults?: FaultConfig;
  management?: { key?: string; secret?: string };
  /** Largest meeting the generator makes (default 12). */
  maxMeetingSize?: number;
  /** Render every record's served text at start: less CPU per page served (benchmarks). */
  prerender?: boolean;
  /** The shape of every app's data (lib/emulator/mixes.ts; default "standard"). */
  mix?: DataMixName;
  /** Session ids that follow time (default) or random UUIDs (lib/emulator/session-ids.ts). */
  sessionIds?: SessionIdOrder;
}

export interface RunningEmulator {
  url: string;
  port: number;
  apps: (AppInfo & { callsUrl: string })[];
  management: { url: string; key: string; secret: string };
  state: EmulatorState;
  close(): Promise<void>;
}

type PlatformRoute = "list" | "get" | "management";

const ERROR_5XX: Record<string, [string, string]> = {
  "500": ["ERR_INTERNAL_SERVER_ERROR", "Something went wrong."],
  "502": ["ERR_BAD_GATEWAY", "Bad gateway."],
  "503": ["ERR_SERVICE_UNAVAILABLE", "The service is temporarily unavailable."],
};

/** Answers a request with the given fault instead of its normal response. */
function applyFault(kind: FaultKind, req: IncomingMessage, res: ServerResponse, hung: Set<Socket>, body: () => string | Buffer): void {
  if (kind === "429") {
    const reset = Math.ceil(Date.now() / 1000) + 1;
    sendError(res, 429, "ERR_TOO_MANY_REQUESTS", "Rate limit exceeded.", "Too many requests; retry after the time in Retry-After.", { "retry-after": "1", "x-rate-limit-reset": String(reset) });
  } else if (kind === "500" || kind === "502" || kind === "503") {
    const [code, message] = ERROR_5XX[kind];
    sendError(res, Number(kind), code, message);
  } else if (kind === "truncate") {
    // Announce the full length, send half, then cut the connection.
    const b = body();
    const full = typeof b === "string" ? Buffer.from(b) : b;
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": String(full.length) });
    res.write(full.subarray(0, Math.floor(full.length / 2)), () => req.socket.destroy());
  } else if (kind === "hang") {
    // Never answer; close() destroys the socket.
    hung.add(req.socket);
  } else {
    const s = req.socket as Socket & { resetAndDestroy?: () => Socket };
    if (typeof s.resetAndDestroy === "function") s.resetAndDestroy();
    else s.destroy();
  }
}

async function handlePlatform(state: EmulatorState, req: IncomingMessage, res: ServerResponse, url: URL, hung: Set<Socket>, log: (route: string, appId?: string, fault?: string) => void): Promise<void> {
  const parts = pathSegments(url.pathname);
  if (!parts) {
    log("unknown");
    return sendError(res, 400, "ERR_BAD_REQUEST", "Malformed percent-encoding in the path.");
  }
  let route: PlatformRoute | undefined;
  let appId: string | undefined;
  if (parts[0] === "management" && parts[1] === "apps" && parts.length === 2) route = "management";
  else if (parts.length === 3 && parts[1] === "v3" && parts[2] === "calls") [route, appId] = ["list", parts[0]];
  else if (parts.length === 4 && parts[1] === "v3" && parts[2] === "calls") [route, appId] = ["get", parts[0]];
  if (!route) {
    log("unknown", appId);
    return sendError(res, 404, "ERR_ROUTE_NOT_FOUND", `No route for ${req.method} ${url.pathname}.`);
  }
  const wantMethod = route === "management" ? "POST" : "GET";
  if (req.method !== wantMethod) {
    log(route, appId);
    return sendError(res, 405, "ERR_METHOD_NOT_ALLOWED", `Use ${wantMethod} for this route.`, undefined, { allow: wantMethod });
  }
  // A real network and a busy platform: every answer (errors and faults included) is late.
  if (state.quirks.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, state.quirks.latencyMs));
  const fault = state.faults.decide(route, appId);
  log(route, appId, fault);
  if (fault) {
    const app = appId ? state.apps.get(appId) : undefined;
    return applyFault(fault, req, res, hung, () => (app && route === "list" ? listPage(state, app, url, undefined).body : '{"data":{"truncated":"body"}}'));
  }
  const limited = state.faults.limited(appId ?? "management", Date.now());
  if (limited) {
    return sendError(res, 429, "ERR_TOO_MANY_REQUESTS", "Rate limit exceeded.", `More than ${state.faults.rateLimitPerMinute} requests in one minute.`, {
      "retry-after": String(limited.retryAfter),
      "x-rate-limit-reset": String(limited.resetAt),
      "x-rate-limit": String(state.faults.rateLimitPerMinute),
      "x-rate-limit-remaining": "0",
    });
  }
  if (route === "management") return createApp(state, req, res);
  const app = authApp(state, appId ?? "", req, res);
  if (!app) return;
  if (route === "get") return getCall(state, app, parts[3], res);
  const who = checkOnBehalfOf(app, req, res);
  if (!who.ok) return;
  const page = listPage(state, app, url, who.uid);
  sendText(res, page.status, page.body);
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const state = new EmulatorState({
    seed: options.seed ?? 42,
    now: Math.floor(options.now ?? Date.now() / 1000),
    months: options.months ?? 6,
    apps: options.apps ?? [],
    quirks: options.quirks,
    faults: options.faults,
    management: options.management,
    maxMeetingSize: options.maxMeetingSize,
    prerender: options.prerender,
    mix: options.mix,
    sessionIds: options.sessionIds,
  });
  const sockets = new Set<Socket>();
  const hung = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const started = Date.now();
    let route = "admin";
    let appId: string | undefined;
    let fault: string | undefined;
    const log = (r: string, a?: string, f?: string) => ([route, appId, fault] = [r, a, f]);
    res.on("close", () => {
      if (route === "admin") return;
      state.logRequest({ at: started, method: req.method ?? "", path: url.pathname + url.search, route, appId, status: res.headersSent ? res.statusCode : 0, fault, headers: loggableHeaders(req) });
    });
    const work = url.pathname.startsWith("/__emulator/") ? handleAdmin(state, req, res, url) : handlePlatform(state, req, res, url, hung, log);
    work.catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, "ERR_INTERNAL_SERVER_ERROR", "Emulator failure.", e instanceof Error ? e.message : String(e));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => {
      sockets.delete(s);
      hung.delete(s);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    state,
    apps: state.appInfos().map((a) => ({ ...a, callsUrl: `${url}/${encodeURIComponent(a.appId)}/v3` })),
    management: { url: `${url}/management`, key: state.managementKey, secret: state.managementSecret },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hung requests and idle keep-alive sockets would keep close() waiting forever.
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
