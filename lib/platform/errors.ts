/**
 * Errors of the platform clients. Messages name the app and quote the platform's
 * `{error: {code, message}}` when it sent one; they never carry credentials.
 */
export class PlatformError extends Error {
  readonly appId: string | undefined;
  constructor(message: string, appId?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PlatformError";
    this.appId = appId;
  }
}

/** 401/403: the key is wrong or lacks scope. Never retried. */
export class PlatformAuthError extends PlatformError {
  readonly status: number;
  readonly code: string | undefined;
  constructor(message: string, opts: { appId?: string; status: number; code?: string }) {
    super(message, opts.appId);
    this.name = "PlatformAuthError";
    this.status = opts.status;
    this.code = opts.code;
  }
}

/** Any other answer the platform will not change its mind about (4xx). */
export class PlatformHttpError extends PlatformError {
  readonly status: number;
  readonly code: string | undefined;
  constructor(message: string, opts: { appId?: string; status: number; code?: string }) {
    super(message, opts.appId);
    this.name = "PlatformHttpError";
    this.status = opts.status;
    this.code = opts.code;
  }
}

export class PlatformNotFoundError extends PlatformHttpError {
  constructor(message: string, opts: { appId?: string; status: number; code?: string }) {
    super(message, opts);
    this.name = "PlatformNotFoundError";
  }
}

/** Retries exhausted on 429/5xx/timeouts/broken bodies; `cause` is the last failure. */
export class PlatformUnavailableError extends PlatformError {
  readonly attempts: number;
  constructor(message: string, opts: { appId?: string; attempts: number; cause?: unknown }) {
    super(message, opts.appId, { cause: opts.cause });
    this.name = "PlatformUnavailableError";
    this.attempts = opts.attempts;
  }
}

/** The server answered 200 with something that breaks the protocol (wrong shape, a page loop). */
export class PlatformProtocolError extends PlatformError {
  constructor(message: string, appId?: string) {
    super(message, appId);
    this.name = "PlatformProtocolError";
  }
}

/** Reads `{error: {code, message}}` (or a bare `{code, message}` / `{message}`) from an error body. */
export function platformErrorDetail(body: unknown): { code?: string; message?: string } {
  if (!body || typeof body !== "object") return {};
  const b = body as Record<string, unknown>;
  const inner = b.error && typeof b.error === "object" ? (b.error as Record<string, unknown>) : b;
  const code = typeof inner.code === "string" || typeof inner.code === "number" ? String(inner.code) : undefined;
  const message =
    typeof inner.message === "string" ? inner.message : typeof b.error === "string" ? b.error : undefined;
  return { code, message };
}

export function describeDetail(status: number, detail: { code?: string; message?: string }): string {
  const parts = [`HTTP ${status}`];
  if (detail.code) parts.push(detail.code);
  const head = parts.join(" ");
  return detail.message ? `${head}: ${detail.message}` : head;
}
