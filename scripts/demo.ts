/**
 * `npm run demo`: the whole product on a fresh clone, in one command.
 *
 * Builds the production bundle if missing, starts the platform emulator (two tenant
 * apps, about six months of calls), makes a demo warehouse in ./data/demo (never the
 * real DATABASE_PATH), registers the apps with webhook credentials, syncs them, serves
 * the dashboard, replays the apps' webhooks into it and prints the demo sign-in.
 *
 * The e2e fixture runs the same script (`--dir .tmp/e2e --fresh --no-build --size small`)
 * and reads `<dir>/demo-state.json`.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";

const program = new Command("demo")
  .option("--port <port>", "dashboard port", process.env.PORT ?? "3000")
  // Loopback only unless asked: the demo prints its admin password, so it must not be
  // reachable from the network by default (`--host 0.0.0.0` opens it on purpose).
  .option("--host <address>", "address the dashboard listens on", "127.0.0.1")
  .option("--dir <dir>", "where the demo warehouse and its state live", "./data/demo")
  .option("--fresh", "start from an empty warehouse")
  .option("--no-build", "fail instead of building when the production build is missing")
  .option("--size <size>", "demo (about 9,000 calls) or small (about 600)", "demo")
  .option("--seed <seed>", "data seed", "20261122")
  .parse(process.argv);
const opts = program.opts<{ port: string; host: string; dir: string; fresh?: boolean; build: boolean; size: string; seed: string }>();

const DIR = path.resolve(opts.dir);
const PORT = Number(opts.port);
/** Who the audit log names for what the demo launcher sets up (as the CLI is "cli"). */
const DEMO_ACTOR = { email: "demo" };
const ADMIN = { email: "admin@callboard.demo", password: "callboard-demo" };
const VIEWER = { email: "viewer@callboard.demo", password: "callboard-viewer" };
const SIZES: Record<string, string> = {
  demo: "acme-sales:6000:us,acme-support:2500:in",
  small: "acme-sales:400:us,acme-support:150:eu",
};

function fail(message: string): never {
  console.error(`demo: ${message}`);
  process.exit(1);
}

function persistentSecret(file: string, bytes: number): string {
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const value = randomBytes(bytes).toString("base64url");
  writeFileSync(file, value, { mode: 0o600 });
  return value;
}

async function main(): Promise<void> {
  if (!SIZES[opts.size]) fail(`--size must be one of ${Object.keys(SIZES).join(", ")}`);
  if (!Number.isInteger(PORT) || PORT <= 0) fail("--port must be a port number");
  if (opts.fresh) rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });

  // The demo's own configuration; set before anything reads env().
  Object.assign(process.env, {
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_PATH: path.join(DIR, "warehouse.db"),
    AUTH_SECRET: persistentSecret(path.join(DIR, "auth-secret"), 32),
    AUTH_TRUST_HOST: "true",
    CALLBOARD_ADMIN_EMAIL: ADMIN.email,
    CALLBOARD_ADMIN_PASSWORD: ADMIN.password,
    SYNC_INTERVAL_SECONDS: process.env.SYNC_INTERVAL_SECONDS ?? "300",
    PORT: String(PORT),
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  });
  // Never your ClickHouse either: the demo runs in ClickHouse mode only on a scratch server
  // named for it (DEMO_CLICKHOUSE_URL / DEMO_CLICKHOUSE_CLUSTER; the ClickHouse e2e run does).
  delete process.env.CLICKHOUSE_URL;
  delete process.env.CLICKHOUSE_CLUSTER;
  if (process.env.DEMO_CLICKHOUSE_URL) process.env.CLICKHOUSE_URL = process.env.DEMO_CLICKHOUSE_URL;
  if (process.env.DEMO_CLICKHOUSE_CLUSTER) process.env.CLICKHOUSE_CLUSTER = process.env.DEMO_CLICKHOUSE_CLUSTER;

  if (!existsSync(".next/BUILD_ID")) {
    if (!opts.build) fail("no production build (.next/BUILD_ID): run `npm run build` first");
    console.log("Building the dashboard (first run only)…");
    const r = spawnSync("npx", ["next", "build"], { stdio: "inherit", env: process.env });
    if (r.status !== 0) fail("the build failed");
  }

  const [{ db }, registry, { ensureFirstAdmin }, { audit }, users, { syncAll }, { startServer }, testing, webhooks] = await Promise.all([
    import("@/db"),
    import("@/lib/apps/registry"),
    import("@/lib/auth/first-admin"),
    import("@/lib/auth/audit"),
    import("@/lib/auth/users"),
    import("@/lib/sync"),
    import("@/lib/server/start"),
    import("@/lib/emulator/testing"),
    import("@/lib/emulator/webhooks"),
  ]);

  console.log("Starting the platform emulator…");
  const emulator = await testing.spawnEmulator({ seed: Number(opts.seed), apps: SIZES[opts.size], months: 6 });
  const stopAll: Array<() => Promise<void>> = [() => emulator.stop()];
  const shutdown = async (code: number) => {
    for (const stop of stopAll.reverse()) await stop().catch(() => undefined);
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  try {
    const warehouse = db();
    const webhookPassword = persistentSecret(path.join(DIR, "webhook-password"), 18);
    for (const a of emulator.apps) {
      const fields = {
        appId: a.appId,
        region: a.region,
        apiKey: a.apiKey,
        callsUrl: a.callsUrl,
        webhookId: "wh-callboard",
        webhookName: "Callboard",
        webhookUsername: "platform",
        webhookPassword,
        webhookUseBasicAuth: true,
        webhookEnabled: true,
      };
      const name = a.appId === "acme-sales" ? "Acme Sales" : "Acme Support";
      // Every change is in the audit log, the demo's own setup included (issue 29).
      if (registry.getAppById(warehouse, a.appId)) {
        registry.updateApp(warehouse, fields);
        await audit(warehouse, DEMO_ACTOR, "app.update", a.appId, { fields: ["apiKey", "callsUrl", "webhook"] });
      } else {
        registry.addApp(warehouse, { ...fields, name });
        await audit(warehouse, DEMO_ACTOR, "app.create", a.appId, { region: a.region, name });
      }
    }
    await ensureFirstAdmin(warehouse);
    if (!(await users.listUsers(warehouse)).some((u) => u.email === VIEWER.email)) {
      const viewer = await users.createUser(warehouse, { ...VIEWER, role: "viewer", apps: ["acme-support"] });
      await audit(warehouse, DEMO_ACTOR, "user.create", viewer.email, { role: viewer.role, apps: viewer.apps, disabled: viewer.disabled });
    }

    console.log("Syncing the tenant apps from the emulator…");
    const results = await syncAll(warehouse, { trigger: "demo" });
    for (const r of results) {
      if (r.status !== "succeeded") fail(`sync of ${r.appId} failed: ${r.error}`);
      console.log(`  ${r.appId}: ${r.fetched} calls fetched, ${r.inserted} new, ${r.updated} updated (${(r.durationMs / 1000).toFixed(1)} s)`);
    }

    const server = await startServer({ port: PORT, hostname: opts.host });
    stopAll.push(() => server.close());

    console.log("Replaying webhooks (recordings, live calls and meetings, chat events)…");
    let replayed = 0;
    for (const a of emulator.apps) {
      const truth = await emulator.admin.truth(a.appId);
      // Recordings of the newest recorded calls (not all: as for an app whose webhook was
      // set up after its first recorded calls, many flagged calls keep waiting for their
      // link), the lifecycle of the newest calls (the ongoing ones stay live) and one
      // delivery of every chat trigger.
      const recordedShown = opts.size === "small" ? 40 : 150;
      const picked = truth.filter((c) => c.status === "ongoing").concat(truth.filter((c) => c.hasRecording === true).slice(0, recordedShown), truth.slice(0, 40));
      const unique = [...new Map(picked.map((c) => [String(c.sessionId), c])).values()];
      const canonical = await Promise.all(unique.map(async (c) => (await emulator.admin.call(a.appId, String(c.sessionId))).canonical));
      const deliveries = webhooks.buildDeliveries(canonical, {
        appId: a.appId,
        region: a.region,
        webhook: "wh-callboard",
        seed: Number(opts.seed),
        repeatRate: 0.05,
        outOfOrderRate: 0.05,
        includeChat: true,
      });
      const report = await webhooks.sendDeliveries(`${server.url}/api/webhooks/${a.appId}`, deliveries, {
        concurrency: 8,
        basicAuth: { username: "platform", password: webhookPassword },
      });
      if (report.failed > 0) console.warn(`  ${a.appId}: ${report.failed} deliveries were refused: ${JSON.stringify(report.byStatus)}`);
      replayed += report.ok;
    }
    console.log(`  ${replayed} deliveries accepted`);

    writeFileSync(
      path.join(DIR, "demo-state.json"),
      JSON.stringify(
        {
          url: server.url,
          emulator: { url: emulator.url, apps: emulator.apps.map(({ appId, region, callsUrl }) => ({ appId, region, callsUrl })) },
          admin: ADMIN,
          viewer: { ...VIEWER, apps: ["acme-support"] },
          webhook: { username: "platform" },
          // For the e2e leak checks only: this file stays on this machine (mode 0600).
          knownSecrets: [...emulator.apps.map((a) => a.apiKey), webhookPassword, emulator.management.key, emulator.management.secret],
        },
        null,
        2,
      ),
      { mode: 0o600 },
    );

    console.log(`
  Callboard demo is running at ${server.url} (listening on ${opts.host} only; --host changes that)
    sign in as ${ADMIN.email} / ${ADMIN.password}   (admin, both apps)
           or ${VIEWER.email} / ${VIEWER.password} (viewer, acme-support only)
  The emulated platform is at ${emulator.url}; the demo warehouse is ${path.relative(process.cwd(), process.env.DATABASE_PATH!)}.
  Ctrl-C stops everything.
`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    await shutdown(1);
  }
}

void main();
