import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/**
 * The test harness: a real Postgres (Debian's `postgresql` package) started as a plain
 * process on loopback, for vitest suites and the bench. `initdb` into a temporary
 * folder, `pg_ctl start` on a free port with a password (scram-sha-256, so tests see it
 * never leaks), `stop()` ends it and removes the folder. Postgres refuses to run as
 * root: as root the harness runs it as the `postgres` user (runuser).
 *
 *   const pgServer = await startPostgres();
 *   process.env.DATABASE_URL = await pgServer.createDatabase("suite_a");
 *   ...
 *   await pgServer.stop();
 *
 * Suites skip with `POSTGRES_SKIP_REASON` only when the binaries are missing, never in
 * CI (.ci/run installs postgresql).
 */

const PASSWORD = "p'g\"pa%ss<&>word";
const USER = "callboard";

/** The folder of initdb and pg_ctl: POSTGRES_BIN_DIR, else the newest /usr/lib/postgresql/N/bin. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) return existsSync(path.join(fromEnv, "pg_ctl")) ? fromEnv : undefined;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => path.join(root, v, "bin")).find((dir) => existsSync(path.join(dir, "pg_ctl")));
}

export const POSTGRES_SKIP_REASON = postgresBinDir() || process.env.CI === "true"
  ? undefined
  : "postgresql is not installed (apt-get install postgresql, or set POSTGRES_BIN_DIR): Postgres suites skipped";

export interface TestPostgres {
  port: number;
  password: string;
  /** A URL for `database` (created by `createDatabase`), as DATABASE_URL holds it. */
  url(database: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast), keeping its files: `start()` brings it back with its data. */
  pause(): void;
  start(): void;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

const running = new Set<() => void>();
process.once("exit", () => {
  for (const stop of running) stop();
});

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("postgresql is not installed: apt-get install postgresql (or set POSTGRES_BIN_DIR)");
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), "callboard-pg-"));
  const dataDir = path.join(dir, "data");
  const pwFile = path.join(dir, "pw");
  writeFileSync(pwFile, PASSWORD + "\n");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
    chownSync(pwFile, uid, gid);
  }
  chmodSync(dir, 0o700);
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? "runuser" : path.join(bin, tool);
    const argv = asRoot ? ["-u", "postgres", "--", path.join(bin, tool), ...args] : args;
    const result = spawnSync(command, argv, { encoding: "utf8", cwd: dir });
    if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr || result.stdout}`);
  };
  run("initdb", ["-D", dataDir, "-U", USER, `--pwfile=${pwFile}`, "-A", "scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"]);

  let port = await freePort();
  const startServer = () =>
    run("pg_ctl", ["-D", dataDir, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, "start"]);
  try {
    startServer();
  } catch {
    port = await freePort(); // the port was taken between the probe and the start
    startServer();
  }
  const stopServer = () => {
    try {
      run("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"]);
    } catch {
      /* already stopped */
    }
  };
  // A suite that never calls stop() (a shared server, lib/auth/test-support.ts) leaves nothing behind either.
  const stopAndRemove = () => {
    stopServer();
    rmSync(dir, { recursive: true, force: true });
  };
  running.add(stopAndRemove);

  const url = (database: string) => `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${database}`;
  return {
    port,
    password: PASSWORD,
    url,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    pause: stopServer,
    start: startServer,
    async stop() {
      stopServer();
      running.delete(stopAndRemove);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
