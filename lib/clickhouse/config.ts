/**
 * `CLICKHOUSE_URL` (`http(s)://user:password@host:port/database`) and
 * `CLICKHOUSE_CLUSTER`, parsed into what the client needs, plus a redacted form of the
 * address for logs and pages: the password never leaves this module except to the
 * HTTP client's Authorization header.
 */
import { clickHouseUrlProblem, clusterNameProblem } from "@/lib/config/clickhouse-url";

export interface ClickHouseConfig {
  /** `http(s)://host:port`, no credentials, no path. */
  origin: string;
  username: string;
  password: string;
  database: string;
  /** A cluster name from the servers' `remote_servers`, or undefined for one server. */
  cluster: string | undefined;
  /** The address with the password replaced: `http://user:***@host:port/database`. */
  redacted: string;
}

/** Parses a URL already validated by `clickHouseUrlProblem` (lib/config/env.ts does). */
export function parseClickHouseConfig(url: string, cluster?: string): ClickHouseConfig {
  const problem = clickHouseUrlProblem(url);
  if (problem) throw new Error(`CLICKHOUSE_URL ${problem}`);
  if (cluster !== undefined && clusterNameProblem(cluster)) throw new Error(`CLICKHOUSE_CLUSTER ${clusterNameProblem(cluster)}`);
  const u = new URL(url);
  const username = decodeURIComponent(u.username) || "default";
  const password = decodeURIComponent(u.password);
  const database = decodeURIComponent(u.pathname.slice(1));
  const origin = `${u.protocol}//${u.host}`;
  const redacted = `${u.protocol}//${encodeURIComponent(username)}${password ? ":***" : ""}@${u.host}/${database}`;
  return { origin, username, password, database, cluster, redacted };
}

/** The same server's address for another host of the cluster (same scheme, port and credentials). */
export function forHost(c: ClickHouseConfig, host: string): ClickHouseConfig {
  const u = new URL(c.origin);
  u.hostname = host;
  const origin = `${u.protocol}//${u.host}`;
  const redacted = `${u.protocol}//${encodeURIComponent(c.username)}${c.password ? ":***" : ""}@${u.host}/${c.database}`;
  return { ...c, origin, redacted };
}

/**
 * `text` with every occurrence of the password (raw and URL-encoded) replaced: applied
 * to every error that leaves the ClickHouse modules, whatever produced it.
 */
export function scrubSecret(text: string, password: string): string {
  if (!password) return text;
  let out = text;
  for (const form of new Set([password, encodeURIComponent(password)])) out = out.split(form).join("***");
  return out;
}
