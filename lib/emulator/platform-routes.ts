// The platform's own routes: call list, one call, and the management create-app call.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyError, ByteWriter, header, isObject, readJson, sendError, sendJson, sendText } from "./http-util";
import { parseListQuery, QueryError } from "./list-query";
import { endlessPage } from "./non-converging";
import { mix, mulberry32, shuffled } from "./prng";
import type { EmulatorState } from "./state";
import type { AppStore } from "./store";
import { REGIONS, type Region } from "./types";

/** Authenticates the app for /{appId}/v3/... routes; answers the error itself. */
export function authApp(state: EmulatorState, appId: string, req: IncomingMessage, res: ServerResponse): AppStore | undefined {
  const app = state.apps.get(appId);
  if (!app) {
    sendError(res, 404, "ERR_APP_NOT_FOUND", `The app ${appId} does not exist.`, "No app with this appId exists in this region.");
    return undefined;
  }
  const key = header(req, "apikey");
  if (key === undefined || key !== app.apiKey) {
    sendError(res, 401, "AUTH_ERR_APIKEY_NOT_FOUND", "The apiKey is not valid.", "The apiKey header is missing or does not belong to this app.");
    return undefined;
  }
  return app;
}

/** Builds the JSON text of one list page. Records are rebuilt, serialized and encoded one
 * by one into a single buffer. */
export function listPage(state: EmulatorState, app: AppStore, url: URL, onBehalfOf: string | undefined): { status: number; body: string | Buffer } {
  let q;
  try {
    q = parseListQuery(url.searchParams);
  } catch (e) {
    if (e instanceof QueryError) return { status: 400, body: JSON.stringify({ error: { code: "ERR_VALIDATION", message: e.message, devMessage: `Invalid query parameter ${e.param}.`, details: { [e.param]: [e.message] } } }) };
    throw e;
  }
  if (state.quirks.nonConverging !== "off") {
    const endless = endlessPage(app, state.quirks.nonConverging, q.page, q.perPage, state.quirks.invalidRecords);
    return { status: 200, body: `{"data":[${endless.texts.join(",")}],"meta":${JSON.stringify(endless.meta)}}` };
  }
  const slots = app.query(q.filters, onBehalfOf);
  const total = slots ? slots.length : app.size;
  const asked = state.quirks.maxPerPage > 0 ? Math.min(q.perPage, state.quirks.maxPerPage) : q.perPage;
  const perPage = state.quirks.ignorePerPage > 0 ? state.quirks.ignorePerPage : asked;
  const start = Math.min(total, (q.page - 1) * perPage);
  const end = Math.min(total, start + perPage);
  let picked: number[] = [];
  const oldest = state.quirks.order === "oldest";
  for (let p = start; p < end; p++) {
    const pos = oldest ? total - 1 - p : p;
    picked.push(slots ? slots[pos] : app.slotAt(pos));
  }
  if (state.quirks.order === "shuffled") picked = shuffled(mulberry32(mix(q.page, total, perPage)), picked);
  const out = new ByteWriter(picked.length * 1600 + 256);
  out.write('{"data":[');
  for (let i = 0; i < picked.length; i++) {
    const rendered = app.renderedText(picked[i], state.quirks.invalidRecords);
    if (i > 0) out.write(",");
    if (rendered) out.writeBytes(rendered);
    else out.write(app.text(picked[i], state.quirks.invalidRecords));
  }
  const meta = { pagination: { total, count: picked.length, per_page: perPage, current_page: q.page, total_pages: Math.ceil(total / perPage) } };
  out.write(`],"meta":${JSON.stringify(meta)}}`);
  return { status: 200, body: out.bytes() };
}

/** onBehalfOf restricts the list to calls that uid took part in, as a user's own view
 * would; an unknown uid is an error, as the platform validates it. */
export function checkOnBehalfOf(app: AppStore, req: IncomingMessage, res: ServerResponse): { ok: boolean; uid?: string } {
  const uid = header(req, "onbehalfof");
  if (uid === undefined || uid === "") return { ok: true };
  if (!app.hasUid(uid)) {
    sendError(res, 404, "ERR_UID_NOT_FOUND", `The user with uid ${uid} does not exist.`, `onBehalfOf names no user of app ${app.appId}.`);
    return { ok: false };
  }
  return { ok: true, uid };
}

export function getCall(state: EmulatorState, app: AppStore, sessionId: string, res: ServerResponse): void {
  const slot = app.find(sessionId);
  if (slot === undefined) {
    sendError(res, 404, "ERR_CALL_NOT_FOUND", `The call ${sessionId} does not exist.`, "No call with this sessionId in this app.");
    return;
  }
  sendText(res, 200, `{"data":${app.text(slot, state.quirks.invalidRecords)}}`);
}

/** POST /management/apps. The real response is undocumented; we answer 200 with
 * {data: {appId, name, region, version, apiKey, createdAt}}. */
export async function createApp(state: EmulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (header(req, "key") !== state.managementKey || header(req, "secret") !== state.managementSecret) {
    sendError(res, 401, "AUTH_ERR_INVALID_CREDENTIALS", "The key or secret is not valid.", "Send the key and secret issued for multi-tenancy in the key and secret headers.");
    return;
  }
  let body;
  try {
    body = await readJson(req);
  } catch (e) {
    if (e instanceof BodyError) return sendError(res, 400, "ERR_BAD_REQUEST", e.message);
    throw e;
  }
  if (!isObject(body)) return sendError(res, 400, "ERR_VALIDATION", "The body must be a JSON object.");
  const { name, version, region } = body;
  if (typeof name !== "string" || name.trim() === "" || name.length > 100) return sendError(res, 400, "ERR_VALIDATION", "The name must be a non-empty string of at most 100 characters.");
  if (typeof version !== "string" || version.trim() === "") return sendError(res, 400, "ERR_VALIDATION", "The version must be a non-empty string.");
  if (typeof region !== "string" || !(REGIONS as readonly string[]).includes(region)) return sendError(res, 400, "ERR_VALIDATION", `The region must be one of ${REGIONS.join(", ")}.`);
  const app = state.createManagedApp(name, region as Region);
  sendJson(res, 200, { data: { appId: app.appId, name, region, version, apiKey: app.apiKey, createdAt: app.clock } });
}
