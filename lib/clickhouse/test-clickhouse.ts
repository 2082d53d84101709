import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseClickHouseConfig, type ClickHouseConfig } from "./config";

/**
 * The test harness: real `clickhouse-server` processes on loopback, for vitest suites,
 * Playwright and the bench. One server, or two as the shards of a cluster (`remote_servers`
 * cluster `callboard_test`): shard 1 on 127.0.0.1, shard 2 on 127.0.0.2 (both loopback on
 * Linux), with the same ports, as the hosts of a real cluster have — so the warehouse
 * reaches every shard exactly as in production (the URL's port on each host that
 * `system.clusters` lists). Each server gets a temporary directory, free ports, UTC,
 * and a password on the default user (so tests see it never leaks). `stop()` ends them
 * and removes their files; they are also killed if the test process exits.
 *
 *   const ch = await startClickHouse({ shards: 2 });
 *   process.env.CLICKHOUSE_URL = ch.url("callboard_test"); process.env.CLICKHOUSE_CLUSTER = ch.cluster;
 *   ...
 *   await ch.stop();
 *
 * Suites skip with `CLICKHOUSE_SKIP_REASON` only when no server binary is installed.
 */

const CANDIDATES = [process.env.CLICKHOUSE_SERVER_BIN, "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"].filter((p): p is string => !!p);

/** The clickhouse-server binary, or undefined when it is not installed. */
export function clickHouseServerBinary(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/** Why ClickHouse suites skip (undefined: they run). Never in CI (.ci/run installs the server): a missing binary fails there. */
export const CLICKHOUSE_SKIP_REASON = clickHouseServerBinary() || process.env.CI === "true"
  ? undefined
  : "clickhouse-server is not installed (apt-get install clickhouse-server, or set CLICKHOUSE_SERVER_BIN): ClickHouse suites skipped";

export const TEST_CLUSTER = "callboard_test";
const PASSWORD = "t'est\"pa%ss<&>word";

export interface TestServer {
  host: string;
  httpPort: number;
  tcpPort: number;
  dir: string;
}

export interface TestClickHouse {
  servers: TestServer[];
  /** The cluster's name with two shards; undefined with one server. */
  cluster: string | undefined;
  /** The password of the `default` user. */
  password: string;
  /** CLICKHOUSE_URL of the first server for `database`. */
  url(database: string): string;
  /** The parsed configuration (as the app builds it from the environment). */
  config(database: string): ClickHouseConfig;
  /** CLICKHOUSE_URL and CLICKHOUSE_CLUSTER for a child process's environment. */
  env(database: string): Record<string, string>;
  /** Stops one server (the others keep running): what a test does to see a shard down. */
  kill(index: number): Promise<void>;
  /** Freezes one server (SIGSTOP: its sockets stay open and answer nothing), or thaws it (SIGCONT). */
  freeze(index: number, frozen: boolean): void;
  stop(): Promise<void>;
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

function serverConfig(s: TestServer, shards: TestServer[], password: string): string {
  const remote = shards.length < 2 ? "" : `<remote_servers><${TEST_CLUSTER}>${shards
    .map((x) => `<shard><replica><host>${x.host}</host><port>${x.tcpPort}</port><user>default</user><password>${xml(password)}</password></replica></shard>`)
    .join("")}</${TEST_CLUSTER}></remote_servers>`;
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${s.dir}/log/server.log</log><errorlog>${s.dir}/log/error.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>${s.httpPort}</http_port>
  <tcp_port>${s.tcpPort}</tcp_port>
  <interserver_http_port>${s.tcpPort + 1}</interserver_http_port>
  <listen_host>${s.host}</listen_host>
  <path>${s.dir}/data/</path>
  <tmp_path>${s.dir}/tmp/</tmp_path>
  <user_files_path>${s.dir}/user_files/</user_files_path>
  <users_config>${s.dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>0</uncompressed_cache_size>
  <max_concurrent_queries>64</max_concurrent_queries>
  ${remote}
</yandex>
`;
}

function usersConfig(password: string, maxMemory: number, settings: Record<string, string | number> = {}): string {
  const sha = createHash("sha256").update(password).digest("hex");
  const extra = Object.entries(settings).map(([k, v]) => `<${k}>${xml(String(v))}</${k}>`).join("");
  return `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>${maxMemory}</max_memory_usage>${extra}</default></profiles>
  <users><default><password_sha256_hex>${sha}</password_sha256_hex><networks><ip>127.0.0.0/8</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
`;
}

/** Whether `port` (and port + 1, the interserver port) can be bound on every host. */
async function portsFree(port: number, hosts: string[]): Promise<boolean> {
  for (const host of hosts) {
    for (const p of [port, port + 1]) {
      const ok = await new Promise<boolean>((resolve) => {
        const srv = createServer();
        srv.once("error", () => resolve(false));
        srv.listen(p, host, () => srv.close(() => resolve(true)));
      });
      if (!ok) return false;
    }
  }
  return true;
}

async function freePort(hosts: string[], avoid: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    if (avoid.has(port) || avoid.has(port + 1) || avoid.has(port - 1)) continue;
    if (await portsFree(port, hosts)) return port;
  }
  throw new Error("no free port pair on loopback for clickhouse-server");
}

async function answers(s: TestServer): Promise<boolean> {
  try {
    const r = await fetch(`http://${s.host}:${s.httpPort}/ping`, { signal: AbortSignal.timeout(1000) });
    return r.ok;
  } catch {
    return false;
  }
}

function errorTail(s: TestServer): string {
  try {
    return readFileSync(path.join(s.dir, "log", "error.log"), "utf8").split("\n").slice(-8).join("\n");
  } catch {
    return "(no error log)";
  }
}

const running = new Set<ChildProcess>();
let exitHook = false;

export interface StartOptions {
  /** 1 (default): one server; 2: two shards of cluster `callboard_test`. */
  shards?: 1 | 2;
  /**
   * Two shards on one address (127.0.0.1) with ports of their own, instead of one host
   * each: a layout the warehouse cannot reach every shard of (it finds a shard's HTTP
   * port only as the URL's port on the host `system.clusters` lists), for the tests of
   * its refusal.
   */
  sameHost?: boolean;
  /** max_memory_usage per query (default 2 GB). */
  maxMemoryBytes?: number;
  /** More settings of the default profile (every query runs with them), e.g. a limit a test holds a query to. */
  profileSettings?: Record<string, string | number>;
  /** Where the servers' directories go (default: the OS temp dir); removed by stop(). */
  parentDir?: string;
  /** How long to wait for the servers to answer (default 60 s: two cores shared by many). */
  timeoutMs?: number;
}

/** Starts the servers and waits until each answers; throws (with the server's error log) if one does not. */
export async function startClickHouse(options: StartOptions = {}): Promise<TestClickHouse> {
  const bin = clickHouseServerBinary();
  if (!bin) throw new Error("clickhouse-server is not installed (apt-get install clickhouse-server, or set CLICKHOUSE_SERVER_BIN)");
  const hosts = options.shards !== 2 ? ["127.0.0.1"] : options.sameHost ? ["127.0.0.1", "127.0.0.1"] : ["127.0.0.1", "127.0.0.2"];
  const root = mkdtempSync(path.join(options.parentDir ?? os.tmpdir(), "callboard-ch-"));
  const distinct = [...new Set(hosts)];
  const taken = new Set<number>();
  const pick = async () => {
    const port = await freePort(distinct, taken);
    taken.add(port);
    return port;
  };
  // Hosts of their own share the ports (as a real cluster's hosts do); servers on one address each get their own.
  const shared = distinct.length === hosts.length ? { httpPort: await pick(), tcpPort: await pick() } : undefined;
  const servers: TestServer[] = [];
  for (const [i, host] of hosts.entries()) {
    const ports = shared ?? { httpPort: await pick(), tcpPort: await pick() };
    servers.push({ host, ...ports, dir: path.join(root, `shard${i + 1}`) });
  }
  const procs: ChildProcess[] = [];
  for (const s of servers) {
    for (const d of ["data", "tmp", "log", "user_files"]) mkdirSync(path.join(s.dir, d), { recursive: true });
    writeFileSync(path.join(s.dir, "config.xml"), serverConfig(s, servers, PASSWORD));
    writeFileSync(path.join(s.dir, "users.xml"), usersConfig(PASSWORD, options.maxMemoryBytes ?? 2_000_000_000, options.profileSettings));
    const child = spawn(bin, [`--config-file=${path.join(s.dir, "config.xml")}`], { cwd: s.dir, stdio: "ignore" });
    running.add(child);
    child.once("exit", () => running.delete(child));
    procs.push(child);
  }
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const c of running) c.kill("SIGKILL");
    });
  }
  const stopAll = async () => {
    await Promise.all(procs.map((p) => stopProcess(p)));
    rmSync(root, { recursive: true, force: true });
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (const [i, s] of servers.entries()) {
    while (!(await answers(s))) {
      if (procs[i].exitCode !== null || Date.now() > deadline) {
        const tail = errorTail(s);
        await stopAll();
        throw new Error(`clickhouse-server on ${s.host}:${s.httpPort} did not start:\n${tail}`);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  const url = (database: string) => `http://default:${encodeURIComponent(PASSWORD)}@${servers[0].host}:${servers[0].httpPort}/${database}`;
  const cluster = servers.length > 1 ? TEST_CLUSTER : undefined;
  return {
    servers,
    cluster,
    password: PASSWORD,
    url,
    config: (database) => parseClickHouseConfig(url(database), cluster),
    env: (database) => ({ CLICKHOUSE_URL: url(database), ...(cluster ? { CLICKHOUSE_CLUSTER: cluster } : {}) }),
    kill: (index) => stopProcess(procs[index]),
    freeze: (index, frozen) => void procs[index].kill(frozen ? "SIGSTOP" : "SIGCONT"),
    stop: stopAll,
  };
}

/** SIGTERM, then SIGKILL after 10 s; resolves when the process has exited. */
export function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => p.kill("SIGKILL"), 10_000);
    p.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    p.kill("SIGTERM");
  });
}
