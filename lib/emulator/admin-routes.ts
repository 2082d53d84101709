// Test controls under /__emulator (no auth; the server only listens on loopback and
// these routes also refuse non-loopback peers). Tests use them as oracle and remote.
import type { IncomingMessage, ServerResponse } from "node:http";
import { FAULT_KINDS, FAULT_ROUTES, type FaultConfig, type FaultRule } from "./faults";
import { BodyError, isObject, pathSegments, readJson, sendError, sendJson } from "./http-util";
import { NON_CONVERGING, type NonConverging } from "./non-converging";
import type { EmulatorState, ListOrder } from "./state";
import type { AdvanceOptions } from "./store";
import { REGIONS, type JsonValue, type Region } from "./types";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

const num = (v: JsonValue | undefined): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === "string" ? v : undefined);
const bool = (v: JsonValue | undefined): boolean | undefined => (typeof v === "boolean" ? v : undefined);

export function parseFaultConfig(v: JsonValue): FaultConfig {
  if (!isObject(v)) throw new BodyError("faults must be an object");
  const rules: FaultRule[] = [];
  for (const r of Array.isArray(v.rules) ? v.rules : []) {
    if (!isObject(r)) throw new BodyError("each rule must be an object");
    const kind = String(r.kind);
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new BodyError(`unknown fault kind ${kind}`);
    const route = str(r.route) ?? "*";
    if (!(FAULT_ROUTES as readonly string[]).includes(route)) throw new BodyError(`unknown fault route ${route}`);
    rules.push({ kind: kind as FaultRule["kind"], route: route as FaultRule["route"], rate: num(r.rate), everyNth: num(r.everyNth), firstN: num(r.firstN), afterN: num(r.afterN), times: num(r.times), appId: str(r.appId) });
  }
  return { rules, seed: num(v.seed), rateLimitPerMinute: num(v.rateLimitPerMinute) };
}

async function streamTruth(state: EmulatorState, appId: string, res: ServerResponse): Promise<void> {
  const app = state.apps.get(appId);
  if (!app) return sendError(res, 404, "ERR_APP_NOT_FOUND", `The app ${appId} does not exist.`);
  res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
  res.write(`{"meta":{"total":${app.size}},"data":[`);
  // Newest first (the canonical order), in chunks with back-pressure: 1M calls is ~1 GB.
  for (let p = 0; p < app.size; p += 500) {
    const parts: string[] = [];
    for (let q = p; q < Math.min(app.size, p + 500); q++) parts.push(app.text(app.slotAt(q), state.quirks.invalidRecords));
    const ok = res.write((p === 0 ? "" : ",") + parts.join(","));
    if (!ok) await new Promise<void>((resolve) => res.once("drain", () => resolve()));
    if (res.destroyed) return;
  }
  res.end("]}");
}

export async function handleAdmin(state: EmulatorState, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (!LOOPBACK.has(req.socket.remoteAddress ?? "")) return sendError(res, 403, "ERR_FORBIDDEN", "Emulator controls are loopback only.");
  const parts = pathSegments(url.pathname)?.slice(1);
  if (!parts) return sendError(res, 400, "ERR_BAD_REQUEST", "Malformed percent-encoding in the path.");
  const m = req.method ?? "GET";
  const route = `${m} ${parts.map((p, i) => (i === 1 || i === 3 ? ":" : p)).join("/")}`;
  let body: JsonValue = {};
  try {
    if (m === "POST" || m === "PUT" || m === "PATCH") body = await readJson(req);
    switch (route) {
      case "GET state":
        return sendJson(res, 200, { seed: state.seed, now: state.now, apps: state.appInfos().map((a) => ({ ...a, clock: state.apps.get(a.appId)?.clock })), quirks: state.quirks, faults: state.faults.snapshot() });
      case "GET apps":
        return sendJson(res, 200, { data: state.appInfos() });
      case "POST apps": {
        if (!isObject(body)) throw new BodyError("body must be an object");
        const appId = str(body.appId);
        if (!appId || /[/\s]/.test(appId)) throw new BodyError("appId is required (no slash or space)");
        if (state.apps.has(appId)) return sendError(res, 409, "ERR_CONFLICT", `App ${appId} exists.`);
        const region = str(body.region) ?? "us";
        if (!(REGIONS as readonly string[]).includes(region)) throw new BodyError("region must be us, eu or in");
        const app = state.addApp({ appId, count: num(body.count) ?? 0, region: region as Region, apiKey: str(body.apiKey), months: num(body.months), name: str(body.name) });
        return sendJson(res, 201, { data: { appId, apiKey: app.apiKey, region: app.region, calls: app.size } });
      }
      case "DELETE apps/:":
        return state.apps.delete(parts[1]) ? sendJson(res, 200, { deleted: parts[1] }) : sendError(res, 404, "ERR_APP_NOT_FOUND", "No such app.");
      case "GET apps/:/calls":
        return streamTruth(state, parts[1], res);
      case "GET apps/:/calls/:":
      case "PATCH apps/:/calls/:": {
        const app = state.apps.get(parts[1]);
        if (!app) return sendError(res, 404, "ERR_APP_NOT_FOUND", "No such app.");
        if (m === "PATCH") {
          if (!isObject(body)) throw new BodyError("body must be an object");
          app.patch(parts[3], { hasRecording: bool(body.hasRecording), end: bool(body.end) });
        }
        const slot = app.find(parts[3]);
        if (slot === undefined) return sendError(res, 404, "ERR_CALL_NOT_FOUND", "No such call.");
        return sendJson(res, 200, { data: JSON.parse(app.text(slot, state.quirks.invalidRecords)) as JsonValue, canonical: app.record(slot) });
      }
      case "POST advance": {
        if (!isObject(body)) throw new BodyError("body must be an object");
        const opts: AdvanceOptions = { seconds: num(body.seconds), newCalls: num(body.newCalls), endOngoing: bool(body.endOngoing), addRecordings: num(body.addRecordings) };
        const only = str(body.appId);
        if (only !== undefined && !state.apps.has(only)) return sendError(res, 404, "ERR_APP_NOT_FOUND", "No such app.");
        const results = Object.fromEntries([...state.apps.values()].filter((a) => only === undefined || a.appId === only).map((a) => [a.appId, a.advance(opts)]));
        return sendJson(res, 200, { results });
      }
      case "GET faults":
        return sendJson(res, 200, state.faults.snapshot());
      case "PUT faults":
        state.faults.configure(parseFaultConfig(body));
        return sendJson(res, 200, state.faults.snapshot());
      case "DELETE faults":
        state.faults.configure({});
        return sendJson(res, 200, state.faults.snapshot());
      case "GET quirks":
        return sendJson(res, 200, state.quirks);
      case "PUT quirks": {
        if (!isObject(body)) throw new BodyError("body must be an object");
        const order = str(body.order);
        if (order !== undefined && !["newest", "oldest", "shuffled"].includes(order)) throw new BodyError("order must be newest, oldest or shuffled");
        const endless = str(body.nonConverging);
        if (endless !== undefined && !(NON_CONVERGING as readonly string[]).includes(endless)) throw new BodyError(`nonConverging must be one of ${NON_CONVERGING.join(", ")}`);
        const ipp = body.ignorePerPage;
        state.quirks = {
          ignorePerPage: ipp === undefined ? state.quirks.ignorePerPage : ipp === true ? 25 : (num(ipp) ?? 0),
          invalidRecords: bool(body.invalidRecords) ?? state.quirks.invalidRecords,
          order: (order as ListOrder | undefined) ?? state.quirks.order,
          maxPerPage: num(body.maxPerPage) ?? state.quirks.maxPerPage,
          latencyMs: num(body.latencyMs) ?? state.quirks.latencyMs,
          nonConverging: (endless as NonConverging | undefined) ?? state.quirks.nonConverging,
        };
        return sendJson(res, 200, state.quirks);
      }
      case "GET requests":
        return sendJson(res, 200, { data: state.requests.slice(-Math.max(1, Number(url.searchParams.get("limit") ?? 500))) });
      case "DELETE requests":
        state.requests = [];
        return sendJson(res, 200, { data: [] });
      case "POST reset":
        state.reset();
        return sendJson(res, 200, { ok: true });
      default:
        return sendError(res, 404, "ERR_ROUTE_NOT_FOUND", `No emulator control ${m} ${url.pathname}.`);
    }
  } catch (e) {
    if (e instanceof BodyError) return sendError(res, 400, "ERR_BAD_REQUEST", e.message);
    throw e;
  }
}
