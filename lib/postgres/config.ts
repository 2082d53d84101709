/**
 * `DATABASE_URL` (`postgres://user:password@host:port/database`): where Callboard's own
 * state lives when several servers share one warehouse (docs/decisions/0035). Parsed
 * here into what the driver needs, plus a redacted form for logs: the password never
 * leaves this module except to the driver.
 */

export interface PostgresConfig {
  /** The URL as given, for the driver (holds the password: never log it). */
  connectionString: string;
  host: string;
  port: number;
  database: string;
  username: string;
  /** `postgres://user:***@host:port/database`. */
  redacted: string;
}

/** Why `value` is not a usable DATABASE_URL, or undefined when it is. Never quotes the value (it holds the password). */
export function postgresUrlProblem(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return "must be a URL such as postgres://user:password@host:5432/callboard";
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") return "must start with postgres:// or postgresql://";
  if (u.hostname === "") return "must name a host";
  if (decodeURIComponent(u.username) === "") return "must name a user (postgres://user:password@host:port/database)";
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) return "must end with the database name, e.g. /callboard";
  if (u.hash !== "") return "must not carry a fragment";
  return undefined;
}

/** Parses a URL already validated by `postgresUrlProblem` (lib/config/env.ts does). */
export function parsePostgresConfig(url: string): PostgresConfig {
  const problem = postgresUrlProblem(url);
  if (problem) throw new Error(`DATABASE_URL ${problem}`);
  const u = new URL(url);
  const username = decodeURIComponent(u.username);
  const database = decodeURIComponent(u.pathname.slice(1));
  const port = u.port === "" ? 5432 : Number(u.port);
  const redacted = `postgres://${encodeURIComponent(username)}${u.password ? ":***" : ""}@${u.host}/${database}`;
  return { connectionString: url, host: u.hostname, port, database, username, redacted };
}
