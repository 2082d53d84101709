import { z } from "zod";

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
  /** Public address of this dashboard, for the ingest URL shown in settings (default: the request's host). */
  CALLBOARD_PUBLIC_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /**
   * `http(s)://user:password@host:port/database`: facts and reports on ClickHouse instead
   * of the embedded engine (lib/analytics/engine.ts picks the engine from it).
   */
  CLICKHOUSE_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** A cluster name from the ClickHouse servers' `remote_servers` (optional). */
  CLICKHOUSE_CLUSTER: z.preprocess(emptyToUndefined, z.string().optional()),
  LOG_LEVEL: z.preprocess(emptyToUndefined, z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info")),
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
