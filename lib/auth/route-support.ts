import { badRequest, HttpError, toErrorResponse } from "@/lib/http/errors";
import { readBodyText } from "@/lib/http/json-body";
import { logger } from "@/lib/log/logger";

/**
 * Small helpers for the auth route handlers and server actions: one try/catch that
 * maps errors through lib/http/errors, and a JSON body reader with a clear 400.
 */
export async function respond(fn: () => Promise<Response> | Response): Promise<Response> {
  try {
    const res = await fn();
    res.headers.set("Cache-Control", "no-store");
    return res;
  } catch (error) {
    const res = toErrorResponse(error, (e) => logger.error({ err: e instanceof Error ? { name: e.name, message: e.message } : String(e) }, "route failed"));
    res.headers.set("Cache-Control", "no-store");
    return res;
  }
}

/** The body as a JSON object: 413 past MAX_JSON_BODY_BYTES (lib/http/json-body.ts), 400 if not an object. `{}` for an empty body when `emptyIsObject`. */
export async function readJsonObject(request: Request, options: { emptyIsObject?: boolean } = {}): Promise<Record<string, unknown>> {
  const text = await readBodyText(request);
  if (options.emptyIsObject && text.trim() === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("the body must be JSON");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw badRequest("the body must be a JSON object");
  return body as Record<string, unknown>;
}

export function parseId(raw: string, what = "id"): number {
  const id = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(id) || id <= 0) throw badRequest(`${what} must be a positive integer`, { parameter: what });
  return id;
}

/** What a server action hands back to its form. `token` only ever once, to its creator. */
export interface ActionState {
  ok?: string;
  error?: string;
  token?: string;
  /** Changes on every submission so a form can tell a new answer from the old one. */
  at?: number;
}

export async function runAction(fn: () => Promise<Omit<ActionState, "at">>): Promise<ActionState> {
  try {
    return { ...(await fn()), at: Date.now() };
  } catch (error) {
    if (error instanceof HttpError) return { error: error.message, at: Date.now() };
    logger.error({ err: error instanceof Error ? { name: error.name, message: error.message } : String(error) }, "action failed");
    return { error: "Something went wrong on our side.", at: Date.now() };
  }
}
