/**
 * The checks of CLICKHOUSE_URL and CLICKHOUSE_CLUSTER, here beside the environment's
 * schema that applies them at start (env.ts); the ClickHouse client's parser
 * (lib/clickhouse/config.ts) applies them again.
 */

/** Database and cluster names go into DDL unquoted-safe: plain identifiers only. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Why `value` is not a usable CLICKHOUSE_URL, or undefined when it is. Never quotes the
 * value itself (it holds the password).
 */
export function clickHouseUrlProblem(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return "must be a URL such as http://user:password@host:8123/callboard";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "must start with http:// or https:// (ClickHouse's HTTP interface)";
  if (u.hostname === "") return "must name a host";
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (database === "") return "must end with the database name, e.g. /callboard";
  if (!IDENTIFIER.test(database)) return "database name must be letters, digits and _ (at most 63), starting with a letter or _";
  if (u.search !== "" || u.hash !== "") return "must not carry a query string or fragment";
  return undefined;
}

export function clusterNameProblem(value: string): string | undefined {
  return IDENTIFIER.test(value) ? undefined : "must be a cluster name from remote_servers: letters, digits and _";
}
