import { z } from "zod";
import { basePathProblem } from "@/lib/http/base-path";
import { trustedProxiesProblem } from "@/lib/http/trusted-proxies";
import { clickHouseUrlProblem, clusterNameProblem } from "./clickhouse-url";
import { postgresUrlProblem } from "@/lib/postgres/config";

/**
 * The environment, validated once per process. Every other module reads `env()`;
 * nothing else touches `process.env` for configuration.
 */
const intFromString = (fallback: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .optional()
    .transform((v) => v ?? fallback);

const emptyToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

/** A limit in whole seconds, at least 1. */
const secondsFromString = (fallback: number) => intFromString(fallback).pipe(z.number().min(1, "must be at least 1 second"));

const booleanFromString = z.preprocess(
  emptyToUndefined,
  z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).optional().transform((v) => v === "true" || v === "1"),
);

/** An optional string that `problem` checks (its message, never the value, is the error: the value may hold a password). */
const checkedString = (problem: (value: string) => string | undefined) =>
  z.preprocess(
    emptyToUndefined,
    z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        const p = v === undefined ? undefined : problem(v);
        if (p) ctx.addIssue({ code: "custom", message: p });
      }),
  );

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_PATH: z.preprocess(emptyToUndefined, z.string().default("./data/callboard.db")),
  AUTH_SECRET: z.preprocess(
    emptyToUndefined,
    z
      .string({ error: "AUTH_SECRET is required (at least 32 characters; e.g. `openssl rand -base64 32`)" })
      .min(32, "AUTH_SECRET must be at least 32 characters"),
  ),
  CALLBOARD_ADMIN_EMAIL: z.preprocess(emptyToUndefined, z.email().optional()),
  CALLBOARD_ADMIN_PASSWORD: z.preprocess(emptyToUndefined, z.string().min(8).optional()),
  SYNC_INTERVAL_SECONDS: intFromString(300),
  /**
   * An app whose last good sync is older than this shows in /api/health (`staleSyncs`) and
   * in /metrics (`callboard_sync_stale`). Default: three times SYNC_INTERVAL_SECONDS; 0 turns it off.
   */
  SYNC_MAX_AGE_SECONDS: z.preprocess(emptyToUndefined, z.string().trim().regex(/^\d+$/, "must be a whole number").transform(Number).optional()),
  /** How often the server evaluates alert rules and sends their notifications; 0 turns it off (lib/alerts). */
  ALERTS_INTERVAL_SECONDS: intFromString(15),
  /** How long after a window closes its rules are evaluated, so that late syncs and webhooks are in. */
  ALERTS_DELAY_SECONDS: intFromString(60),
  /** `off`: analytics reports run on the request's thread instead of the analytics worker (docs/decisions/0006-analytics-rollups.md). */
  ANALYTICS_WORKER: z.preprocess(emptyToUndefined, z.enum(["on", "off"]).default("on")),
  PLATFORM_DOMAIN: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[a-z0-9.-]+(:\d+)?$/i, "must be a bare domain such as example.com")
      .optional(),
  ),
  PLATFORM_MANAGEMENT_URL: z.preprocess(emptyToUndefined, z.url().optional()),
  PLATFORM_MANAGEMENT_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  PLATFORM_MANAGEMENT_SECRET: z.preprocess(emptyToUndefined, z.string().optional()),
  PORT: intFromString(3000),
  /**
   * Requests to the platform in flight at once, shared by every app syncing in this
   * process; each app keeps up to this many pages in flight (docs/decisions/0002-sync.md).
   */
  SYNC_CONCURRENCY: intFromString(6).pipe(z.number().int().min(1, "must be at least 1").max(64, "must be at most 64")),
  /** Public address of this dashboard, for the ingest URL shown in settings (default: the request's host). */
  CALLBOARD_PUBLIC_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** next-auth's own setting, read here too: the public address sign-in redirects and the same-origin check use. */
  AUTH_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** `true` behind a reverse proxy: X-Forwarded-Host / X-Forwarded-Proto name the request's own address. */
  AUTH_TRUST_HOST: booleanFromString,
  /** Slow or stalled clients are cut off (lib/server/http-limits.ts, docs/decisions/0009-hostile-clients.md). */
  HTTP_HEADERS_TIMEOUT_SECONDS: secondsFromString(10),
  HTTP_REQUEST_TIMEOUT_SECONDS: secondsFromString(30),
  HTTP_IDLE_TIMEOUT_SECONDS: secondsFromString(65),
  /** Open connections one client address may hold; 0 turns the cap off. */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: intFromString(128),
  /** Kept days of raw webhook deliveries (0: forever; never pruned before ClickHouse has them). */
  RETAIN_DELIVERIES_DAYS: intFromString(90),
  /** Kept days of the audit log (0, the default: forever). */
  RETAIN_AUDIT_DAYS: intFromString(0),
  /** Kept days of sync runs (each app's latest is always kept; 0: forever). */
  RETAIN_SYNC_RUNS_DAYS: intFromString(90),
  /**
   * ClickHouse mode: kept months of call facts, the current UTC month included (0, the
   * default: forever). Older months are dropped whole from every fact table and
   * pre-aggregate on every shard (lib/clickhouse/fact-retention.ts).
   */
  RETAIN_CALLS_MONTHS: intFromString(0),
  /** A Prometheus scrape of /metrics on the main port sends it as `Authorization: Bearer <token>` (lib/server/metrics-endpoint.ts). */
  METRICS_TOKEN: z.preprocess(emptyToUndefined, z.string().min(16, "must be at least 16 characters").optional()),
  /** /metrics on a port of its own (no token needed there unless METRICS_TOKEN is set too). */
  METRICS_PORT: z.preprocess(
    emptyToUndefined,
    z.string().trim().regex(/^\d+$/, "must be a port number").transform(Number).pipe(z.number().min(1).max(65535, "must be a port number")).optional(),
  ),
  /** `off`: migrations change the warehouse without first keeping a copy beside it (db/backup.ts). */
  MIGRATION_BACKUP: z.preprocess(emptyToUndefined, z.enum(["on", "off"]).default("on")),
  /**
   * CIDR list of reverse proxies whose X-Forwarded-For is believed (lib/auth/client-address.ts);
   * `none`: nobody's. Unset: loopback only (a proxy on this host).
   */
  TRUSTED_PROXIES: checkedString(trustedProxiesProblem),
  /** Serve under a sub-path such as /callboard: fixed at `npm run build`, checked at `npm start` (lib/http/base-path.ts). */
  BASE_PATH: checkedString(basePathProblem),
  /** Single sign-on with OpenID Connect (lib/auth/oidc.ts): all three, or none. */
  OIDC_ISSUER: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/, error: "must be the provider's issuer URL" }).optional()),
  OIDC_CLIENT_ID: z.preprocess(emptyToUndefined, z.string().optional()),
  OIDC_CLIENT_SECRET: z.preprocess(emptyToUndefined, z.string().optional()),
  /** The claim whose value `admin` makes a first-time single sign-on user an admin (viewer otherwise). */
  OIDC_ROLE_CLAIM: z.preprocess(emptyToUndefined, z.string().optional()),
  /** The claim listing the app ids a first-time single sign-on viewer may see. */
  OIDC_APPS_CLAIM: z.preprocess(emptyToUndefined, z.string().optional()),
  /** `off`: no password sign-in, only single sign-on. */
  LOCAL_PASSWORDS: z.preprocess(emptyToUndefined, z.enum(["on", "off"], { error: "must be on or off" }).default("on")),
  /** Requests a minute one API token may make (bursts up to the same number); 0 turns the limit off (lib/auth/token-rate-limit.ts). */
  API_TOKEN_RATE_LIMIT_PER_MINUTE: intFromString(600),
  LOG_LEVEL: z.preprocess(emptyToUndefined, z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info")),
  /**
   * `http(s)://user:password@host:port/database`: facts and reports on ClickHouse instead of
   * the embedded engine (lib/analytics/engine.ts picks the engine from it;
   * docs/decisions/0014-clickhouse-warehouse.md). The messages below never quote the value:
   * it holds the password.
   */
  CLICKHOUSE_URL: checkedString(clickHouseUrlProblem),
  /** A cluster of the servers' `remote_servers`: local tables on every shard behind Distributed tables. */
  CLICKHOUSE_CLUSTER: checkedString(clusterNameProblem),
  /**
   * `postgres://user:password@host:port/database`: Callboard's own state (users, apps,
   * tokens, the webhook inbox, leases…) in Postgres, so that several servers share it
   * (docs/decisions/0035-state-in-postgres.md). Needs CLICKHOUSE_URL: the facts must be
   * shared too. Never quoted in a message: it holds the password.
   */
  DATABASE_URL: checkedString(postgresUrlProblem),
  /**
   * How long a report (and a CSV's first rows) may wait on ClickHouse before the answer is
   * 503 `analytics_unavailable` and the query is cancelled on the server (lib/clickhouse/client.ts).
   */
  CLICKHOUSE_QUERY_TIMEOUT_SECONDS: secondsFromString(30),
  /**
   * The most one statement of `npm run db:migrate`'s move to schema v2 may take (a month's
   * INSERT … SELECT on the largest server) before the move stops with an error naming the
   * server and the query (lib/clickhouse/move-v2-guards.ts).
   */
  CLICKHOUSE_MOVE_STATEMENT_TIMEOUT_SECONDS: secondsFromString(600),
}).superRefine((e, ctx) => {
  if (e.DATABASE_URL !== undefined && e.CLICKHOUSE_URL === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["DATABASE_URL"],
      message:
        "needs CLICKHOUSE_URL: with Callboard's state in Postgres (several servers), the calls and webhook facts must live in a ClickHouse every server shares; set CLICKHOUSE_URL, or unset DATABASE_URL to keep everything in the SQLite file at DATABASE_PATH",
    });
  }
  const oidc = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET].filter((v) => v !== undefined).length;
  if (oidc !== 0 && oidc !== 3) {
    ctx.addIssue({ code: "custom", path: ["OIDC_ISSUER"], message: "single sign-on needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together" });
  }
  if (e.LOCAL_PASSWORDS === "off" && oidc !== 3) {
    ctx.addIssue({ code: "custom", path: ["LOCAL_PASSWORDS"], message: "off leaves no way to sign in without single sign-on (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)" });
  }
  if (e.RETAIN_CALLS_MONTHS > 0 && e.CLICKHOUSE_URL === undefined) {
    ctx.addIssue({ code: "custom", path: ["RETAIN_CALLS_MONTHS"], message: "needs CLICKHOUSE_URL: only the facts in ClickHouse have a retention (the SQLite warehouse keeps its calls forever); unset it or set it to 0" });
  }
  if (e.CLICKHOUSE_CLUSTER !== undefined && e.CLICKHOUSE_URL === undefined) {
    ctx.addIssue({ code: "custom", path: ["CLICKHOUSE_CLUSTER"], message: "needs CLICKHOUSE_URL (the address of one of the cluster's servers)" });
  }
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EnvError";
  }
}

let cached: Env | undefined;

export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = envSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Tests change the environment between suites. */
export function resetEnvForTests(): void {
  cached = undefined;
}
