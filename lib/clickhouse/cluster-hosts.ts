import { forHost, type ClickHouseConfig } from "./config";
import { openClickHouse, type ClickHouse, type OpenOptions } from "./client";
import { randomUUID } from "node:crypto";
import { sql } from "./sql";

/**
 * The servers of CLICKHOUSE_CLUSTER, and the way to each one. Without distributed DDL every
 * server needs its local tables created over its own HTTP interface, but `system.clusters`
 * lists servers by their TCP address (what the Distributed tables use). Callboard reaches a
 * server at the host `system.clusters` gives it, on CLICKHOUSE_URL's scheme, port and
 * credentials, as in a real cluster whose hosts all serve the same ports, and checks that
 * the server answering there is the one listed. Otherwise two shards on one host with
 * different ports would be one server reached twice, and the other shard would never get
 * its tables.
 *
 * The check: the query sent over HTTP looks for itself (its query_id) in the
 * system.processes of the listed TCP address, through remote() with
 * prefer_localhost_replica = 0 (always over TCP). Only the server running the query finds
 * it. `system.clusters.is_local` cannot say it: 18.16 calls an address local when it is one
 * of the machine's interface addresses with the server's TCP port, so on 127.0.0.2 the
 * shard on 127.0.0.1 with the same port is "local" too.
 */

/** One server of the cluster, as `system.clusters` lists it. */
export interface ClusterHost {
  shard: number;
  replica: number;
  host: string;
  /** Its TCP port (remote_servers' `<port>`), not the HTTP port Callboard uses. */
  tcpPort: number;
}

/** The servers of `cluster` as the URL's server lists them, by shard then replica. */
export async function clusterHosts(ch: ClickHouse, cluster: string): Promise<ClusterHost[]> {
  const rows = await ch.rows<{ shard_num: number; replica_num: number; host_name: string; port: number }>(
    sql`SELECT shard_num, replica_num, host_name, port FROM system.clusters WHERE cluster = ${cluster} ORDER BY shard_num, replica_num`.text,
  );
  return rows.map((r) => ({ shard: Number(r.shard_num), replica: Number(r.replica_num), host: r.host_name, tcpPort: Number(r.port) }));
}

/** "shard 2, replica 1 (127.0.0.1:9001 in remote_servers of cluster "main")": how errors name a server. */
export function describeClusterHost(cluster: string, h: ClusterHost): string {
  return `shard ${h.shard}, replica ${h.replica} (${h.host}:${h.tcpPort} in remote_servers of cluster "${cluster}")`;
}

/** A server of the cluster that Callboard cannot reach over HTTP; the message says which, and how to fix it. */
export class ClusterHostUnreachableError extends Error {
  constructor(
    readonly cluster: string,
    readonly host: ClusterHost,
    /** What went wrong at the address tried (no password). */
    readonly reason: string,
    /** The HTTP address tried (redacted). */
    readonly tried: string,
    /** CLICKHOUSE_URL's HTTP port. */
    port: string,
  ) {
    super(
      `ClickHouse ${describeClusterHost(cluster, host)} cannot be reached: ${reason} at ${tried}. ` +
        `Callboard creates each shard's tables over HTTP at the host remote_servers gives it, on CLICKHOUSE_URL's port (${port}). ` +
        `Give every server of the cluster its own host or address (on one machine: 127.0.0.1, 127.0.0.2, …) with http_port ${port}, ` +
        `list those hosts in remote_servers, then run npm run db:migrate again.`,
    );
    this.name = "ClusterHostUnreachableError";
  }
}

/** A cluster server's client, checked to be that server. The caller closes it. */
export interface ReachedHost {
  host: ClusterHost;
  config: ClickHouseConfig;
  client: ClickHouse;
}

/**
 * Opens `h` over HTTP and checks that the server answering is `h` itself; throws
 * ClusterHostUnreachableError (client closed) when nothing answers or another server does.
 */
export async function reachClusterHost(c: ClickHouseConfig, cluster: string, h: ClusterHost, options: OpenOptions & { signal?: AbortSignal } = {}): Promise<ReachedHost> {
  const config = forHost(c, h.host);
  const url = new URL(config.origin);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const client = openClickHouse(config, { noDatabase: true, ...options });
  const queryId = `callboard-identify-${randomUUID()}`;
  const address = `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.tcpPort}`;
  let found: Array<{ n: number }>;
  try {
    found = await client.rows(
      sql`SELECT count() AS n FROM remote(${address}, system.processes, ${c.username}, ${c.password}) WHERE query_id = ${queryId} SETTINGS prefer_localhost_replica = 0`.text,
      options.signal,
      queryId,
    );
  } catch (err) {
    await client.close();
    const message = err instanceof Error ? err.message.replace(/^ClickHouse query failed: /, "") : String(err);
    throw new ClusterHostUnreachableError(cluster, h, `no answer (${message})`, config.redacted, port);
  }
  if (Number(found[0]?.n) > 0) return { host: h, config, client };
  await client.close();
  throw new ClusterHostUnreachableError(cluster, h, "another server answers there", config.redacted, port);
}

/**
 * Every server of the cluster reached, or the first one that cannot be (all opened clients
 * closed): migrations check them all before they change any.
 */
export async function reachAllClusterHosts(c: ClickHouseConfig, cluster: string, hosts: readonly ClusterHost[], options: OpenOptions = {}): Promise<ReachedHost[]> {
  const reached: ReachedHost[] = [];
  try {
    for (const h of hosts) reached.push(await reachClusterHost(c, cluster, h, options));
    return reached;
  } catch (err) {
    await Promise.all(reached.map((r) => r.client.close()));
    throw err;
  }
}
