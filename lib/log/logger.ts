import pino from "pino";

/**
 * One structured logger. Secrets are redacted by key name wherever they appear, as a
 * second line of defence: code never passes secrets to the logger on purpose.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
  base: undefined,
  redact: {
    paths: [
      "apiKey", "*.apiKey", "apikey", "*.apikey", "password", "*.password", "secret", "*.secret",
      "key", "*.key", "authorization", "*.authorization", "headers.authorization", "headers.apikey",
      "token", "*.token",
    ],
    censor: "[redacted]",
  },
});

export type Logger = typeof logger;
