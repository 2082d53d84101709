import type Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import type { Db } from "@/db/client";
import * as schema from "@/db/schema";
import { webhookAuthSettings, type WebhookAuthSettings } from "@/lib/apps/registry";
import { isJsonContentType } from "@/lib/http/content-type";
import { HttpError } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { countWebhookDelivery } from "@/lib/metrics/registry";
import { checkBasicAuth } from "./auth";
import {
  countBucket, envelopeSchema, InvalidEventError, isLiveTrigger, parseLive, parseRecording,
  RECORDING_TRIGGER, triggerCategory, type Envelope,
} from "../platform/webhook-envelope";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "./json-depth";
import { clientSessionChange, type ClientSessionChange } from "@/lib/platform/client-session-facts";
import { bodyKey, liveKey, recordingKey } from "./keys";
import { GroupCommitter, StoreUnavailableError, type Effect, type GroupCommitterOptions, type PreparedDelivery, type Rejection, type StoreOutcome } from "./store";

/**
 * The webhook route, independent of the HTTP layer: `preflight` decides from the
 * method, app and headers alone (so an unauthenticated request never has its body
 * read), `accept` takes the body, validates it and answers once it is durable.
 * Both the lean node:http handler (webhook-handler.ts, wired in front of Next by lib/server/start.ts)
 * and the Next.js route (app/api/webhooks/[appId]/route.ts) call these.
 *
 * Order of checks: method (405) → app exists (404) → credentials (401) → webhook
 * enabled (403) → content type (415) → declared size (413) → body: size (413),
 * UTF-8 (400), nesting depth (422, before parsing), JSON (400), envelope (400), appId
 * matches the route (400), the fields a known trigger needs (422). See docs/decisions/0003-webhook-ingest.md.
 */

export const MAX_BODY_BYTES = 1024 * 1024;

export interface IngestHeaders {
  contentType?: string | null;
  contentLength?: string | number | null;
  authorization?: string | null;
}

export interface IngestResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The app a delivery is for, with what the checks need. */
export interface IngestApp {
  pk: number;
  appId: string;
}

export type Preflight = { ok: true; app: IngestApp } | { ok: false; result: IngestResult };

const errorResult = (e: HttpError): IngestResult => ({
  status: e.status,
  body: { error: { code: e.code, message: e.message, ...(e.details ?? {}) } },
  headers: e.headers,
});

const fail = (status: number, code: string, message: string, headers?: Record<string, string>, details?: Record<string, unknown>) =>
  new HttpError(status, code, message, details, headers);

const STORED: IngestResult = { status: 200, body: { status: "stored" } };
const DUPLICATE: IngestResult = { status: 200, body: { status: "duplicate" } };
const INTERNAL: IngestResult = { status: 500, body: { error: { code: "internal_error", message: "Something went wrong on our side." } } };
/** Not stored (disk full, warehouse locked, I/O error): the platform must send it again. */
const unavailable = (retryAfterSeconds: number): IngestResult => ({
  status: 503,
  body: { error: { code: "unavailable", message: "The delivery could not be stored right now; send it again." } },
  headers: { "Retry-After": String(retryAfterSeconds) },
});

const utf8 = new TextDecoder("utf-8", { fatal: true });
const APP_CACHE_MS = 1000;

/**
 * Where an ingestor stores what it accepts: the SQLite file's GroupCommitter (store.ts), or
 * the Postgres inbox shared by several servers (postgres-inbox.ts). `submit` resolves once
 * the delivery is durable, and rejects with StoreUnavailableError when it could not be
 * stored (answered 503 + Retry-After: the platform sends it again).
 */
export interface DeliveryStore {
  submit(delivery: PreparedDelivery): Promise<StoreOutcome>;
  /** Best effort: a refused delivery for the rejections list. */
  noteRejection(rejection: Rejection): void;
  close(): void;
}

export interface Ingestor {
  readonly maxBodyBytes: number;
  /** Asynchronous: the app's settings come from the state store (the SQLite file, or Postgres), cached a second. */
  preflight(method: string, appId: string, headers: IngestHeaders): Promise<Preflight>;
  /** The body grew past the limit while being read. */
  tooLarge(app: IngestApp): IngestResult;
  accept(app: IngestApp, body: Uint8Array, receivedMs?: number): Promise<IngestResult>;
  close(): void;
}

export interface IngestorOptions extends GroupCommitterOptions {
  maxBodyBytes?: number;
}

/** The SQLite file's ingestor, with its group committer (tests and the benchmark read its stats). */
export interface SqliteIngestor extends Ingestor {
  readonly committer: GroupCommitter;
}

/**
 * An ingestor writing through `sqlite`, a connection of its own. A 200 means fsynced:
 * pass a `syncer` for a connection with `synchronous = NORMAL` (what `getIngestor`
 * does), or give it a connection with `synchronous = FULL` and no syncer.
 */
export function createIngestor(sqlite: Database.Database, options: IngestorOptions = {}): SqliteIngestor {
  const committer = new GroupCommitter(sqlite, options);
  // The apps registry's own query (one for both dialects), on the ingest's connection.
  const settingsDb = drizzle(sqlite, { schema }) as Db;
  return { ...ingestorOver(committer, settingsDb, options), committer };
}

/**
 * The webhook route over any delivery store: `settingsDb` is the state store apps are
 * read from (the SQLite file, or Postgres: decision 0035), `committer` where deliveries go.
 */
export function ingestorOver(committer: DeliveryStore, settingsDb: Db, options: { maxBodyBytes?: number } = {}): Ingestor {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;

  // App settings are read at most once a second per app id (also for unknown ids, bounded):
  // at thousands of deliveries a second the lookup was a tenth of the work. A settings
  // change (password, enabled) applies within a second.
  const appCache = new Map<string, { row: WebhookAuthSettings | undefined; until: number }>();
  const lookupApp = async (appId: string): Promise<WebhookAuthSettings | undefined> => {
    const now = Date.now();
    const hit = appCache.get(appId);
    if (hit && hit.until > now) return hit.row;
    const row = await webhookAuthSettings(settingsDb, appId);
    if (appCache.size >= 1000) appCache.clear();
    appCache.set(appId, { row, until: now + APP_CACHE_MS });
    return row;
  };

  const refuse = (app: IngestApp, e: HttpError, trigger: string | null = null): IngestResult => {
    countWebhookDelivery(app.appId, "rejected");
    committer.noteRejection({ appPk: app.pk, status: e.status, code: e.code, reason: e.message.slice(0, 500), trigger, receivedMs: Date.now() });
    logger.debug({ appId: app.appId, status: e.status, code: e.code }, "webhook delivery refused");
    return errorResult(e);
  };

  async function preflight(method: string, appId: string, headers: IngestHeaders): Promise<Preflight> {
    if (method !== "POST") {
      return { ok: false, result: errorResult(fail(405, "method_not_allowed", "Webhook deliveries are POST requests.", { Allow: "POST" })) };
    }
    let row: WebhookAuthSettings | undefined;
    try {
      row = appId.length <= 100 ? await lookupApp(appId) : undefined;
    } catch (error) {
      // The state store cannot answer (locked, unreachable): the platform sends it again, nothing is lost.
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, "webhook delivery refused: the app's settings could not be read");
      return { ok: false, result: unavailable(1) };
    }
    if (!row) {
      logger.debug({ status: 404 }, "webhook delivery for an unknown app");
      return { ok: false, result: errorResult(fail(404, "not_found", "No webhook receiver at this address: check the app id in the URL.")) };
    }
    const app: IngestApp = { pk: row.pk, appId: row.appId };
    if (row.webhookUseBasicAuth) {
      let ok: boolean;
      try {
        ok = checkBasicAuth(headers.authorization, { username: row.webhookUsername, passwordEnc: row.webhookPasswordEnc });
      } catch (error) {
        logger.error({ appId: app.appId, err: error instanceof Error ? error.message : String(error) }, "webhook credentials unusable");
        return { ok: false, result: INTERNAL };
      }
      if (!ok) {
        return {
          ok: false,
          result: refuse(app, fail(401, "unauthorized", "Missing or wrong webhook credentials (HTTP Basic).", { "WWW-Authenticate": 'Basic realm="callboard-webhooks", charset="UTF-8"' })),
        };
      }
    }
    if (!row.webhookEnabled) {
      return { ok: false, result: refuse(app, fail(403, "webhook_disabled", "Webhook deliveries are turned off for this app.")) };
    }
    if (!isJsonContentType(headers.contentType)) {
      return { ok: false, result: refuse(app, fail(415, "unsupported_media_type", "Send the delivery as Content-Type: application/json (UTF-8).")) };
    }
    const declared = headers.contentLength == null || headers.contentLength === "" ? null : Number(headers.contentLength);
    if (declared !== null && Number.isFinite(declared) && declared > maxBodyBytes) return { ok: false, result: tooLarge(app) };
    return { ok: true, app };
  }

  function tooLarge(app: IngestApp): IngestResult {
    return refuse(app, fail(413, "payload_too_large", `The body is larger than ${maxBodyBytes} bytes.`));
  }

  function prepareDelivery(app: IngestApp, body: Uint8Array, receivedMs: number): PreparedDelivery {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      throw fail(400, "invalid_utf8", "The body is not valid UTF-8.");
    }
    if (text.trim() === "") throw fail(400, "invalid_json", "The body is empty: send the JSON envelope.");
    // Before parsing: a 4xx, never a 500 (which the platform retries forever).
    if (jsonNestsDeeperThan(body)) {
      throw fail(422, "nesting_too_deep", `The body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels, the limit.`, undefined, { limit: MAX_JSON_DEPTH });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw fail(400, "invalid_json", "The body is not valid JSON.");
    }
    const r = envelopeSchema.safeParse(parsed);
    if (!r.success) {
      const issue = r.error.issues[0];
      const field = issue?.path.length ? issue.path.join(".") : "body";
      const message = issue?.code === "invalid_type" && issue.path.length === 0
        ? "The body must be a JSON object (the envelope {trigger, data, appId, region, webhook, type?})."
        : `Envelope field ${field}: ${issue?.message ?? "invalid"}.`;
      throw fail(400, "invalid_envelope", message, undefined, { field });
    }
    const env: Envelope = r.data;
    if (env.appId.toLowerCase() !== app.appId.toLowerCase()) {
      throw fail(400, "app_mismatch", "The envelope's appId is not the app of this URL.", undefined, { field: "appId" });
    }

    let effect: Effect;
    let idemKey: string;
    let sessionId: string | null = null;
    let clients: ClientSessionChange | null = null;
    const category = triggerCategory(env.trigger);
    if (env.trigger === RECORDING_TRIGGER) {
      const recording = parseRecording(env.data);
      effect = { kind: "recording", recording };
      idemKey = recordingKey(env, recording);
      sessionId = recording.sessionId;
    } else if (isLiveTrigger(env.trigger)) {
      const live = parseLive(env.trigger, env.type, env.data);
      effect = { kind: "live", live };
      idemKey = liveKey(env, live);
      sessionId = live.sessionId;
      clients = clientSessionChange(app.pk, env.trigger, sessionId, env.data, receivedMs);
    } else {
      effect = category === "unknown" ? { kind: "none" } : { kind: "count" };
      idemKey = bodyKey(env, parsed);
    }

    return {
      appPk: app.pk,
      idemKey,
      trigger: env.trigger,
      webhook: env.webhook,
      type: env.type ?? null,
      sessionId,
      body: text,
      receivedMs,
      bucketStart: countBucket(env.trigger, env.data, receivedMs),
      known: category !== "unknown",
      effect,
      clients,
    };
  }

  async function accept(app: IngestApp, body: Uint8Array, receivedMs = Date.now()): Promise<IngestResult> {
    if (body.byteLength > maxBodyBytes) return tooLarge(app);
    let delivery: PreparedDelivery;
    try {
      delivery = prepareDelivery(app, body, receivedMs);
    } catch (error) {
      if (error instanceof HttpError) return refuse(app, error, triggerOf(body));
      if (error instanceof InvalidEventError) {
        return refuse(app, fail(422, "invalid_event", `The event cannot be applied: ${error.message}.`, undefined, { field: error.field }), triggerOf(body));
      }
      logger.error({ appId: app.appId, err: error instanceof Error ? error.message : String(error) }, "webhook delivery could not be read");
      return INTERNAL;
    }
    try {
      const stored = (await committer.submit(delivery)) === "stored";
      countWebhookDelivery(app.appId, stored ? "accepted" : "repeated");
      return stored ? STORED : DUPLICATE;
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        countWebhookDelivery(app.appId, "unavailable");
        return unavailable(error.retryAfterSeconds);
      }
      logger.error({ appId: app.appId, err: error instanceof Error ? error.message : String(error) }, "webhook delivery failed");
      return INTERNAL;
    }
  }

  return { maxBodyBytes, preflight, tooLarge, accept, close: () => committer.close() };
}

/** The trigger of a refused body, when it can be read (for the rejections list). */
function triggerOf(body: Uint8Array): string | null {
  if (jsonNestsDeeperThan(body)) return null; // not worth building to read one field
  try {
    const v: unknown = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
    const t = typeof v === "object" && v !== null ? (v as { trigger?: unknown }).trigger : undefined;
    return typeof t === "string" ? t.slice(0, 100) : null;
  } catch {
    return null;
  }
}
