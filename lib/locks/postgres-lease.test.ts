import { spawn } from "node:child_process";
import { once } from "node:events";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres } from "@/db/postgres/client";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { acquireLease, releaseLease, renewLease } from "./postgres-lease";

/** Sync leases in a real Postgres, asked for by "servers" that are separate pools and processes. */
describe.skipIf(POSTGRES_SKIP_REASON)("sync leases in Postgres", () => {
  let server: TestPostgres;
  let url: string;
  let serverA: pg.Pool;
  let serverB: pg.Pool;
  let appPk = 0;
  const newApp = async () => {
    const r = await serverA.query<{ pk: string }>(
      "INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ($1, 'App', 'us', 'enc', '1234') RETURNING pk",
      [`app-${++appPk}-${Date.now()}`],
    );
    return Number(r.rows[0]!.pk);
  };

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase("leases");
    await migratePostgres(parsePostgresConfig(url));
    serverA = new pg.Pool({ connectionString: url, max: 4 });
    serverB = new pg.Pool({ connectionString: url, max: 4 });
  });
  afterAll(async () => {
    await serverA?.end();
    await serverB?.end();
    await server?.stop();
  });

  it("two servers asking for the same app at once: exactly one gets it, every time", async () => {
    for (let round = 0; round < 20; round++) {
      const app = await newApp();
      const answers = await Promise.all([
        acquireLease(serverA, app, "server-a", 30_000),
        acquireLease(serverB, app, "server-b", 30_000),
        acquireLease(serverA, app, "server-a2", 30_000),
        acquireLease(serverB, app, "server-b2", 30_000),
      ]);
      expect(answers.filter((a) => a.acquired)).toHaveLength(1);
      const refused = answers.find((a) => !a.acquired);
      const winner = ["server-a", "server-b", "server-a2", "server-b2"][answers.findIndex((a) => a.acquired)];
      expect(refused).toMatchObject({ acquired: false, owner: winner });
    }
  });

  it("is renewed by its holder only, lapses when not renewed, and is then taken over; the old holder learns it lost it", async () => {
    const app = await newApp();
    expect(await acquireLease(serverA, app, "server-a", 400)).toEqual({ acquired: true, tookOverFrom: null });
    expect(await renewLease(serverB, app, "server-b", 400)).toBe(false);
    expect(await renewLease(serverA, app, "server-a", 400)).toBe(true);
    expect((await acquireLease(serverB, app, "server-b", 400)).acquired).toBe(false);
    await new Promise((r) => setTimeout(r, 600));
    expect(await acquireLease(serverB, app, "server-b", 30_000)).toEqual({ acquired: true, tookOverFrom: "server-a" });
    expect(await renewLease(serverA, app, "server-a", 400)).toBe(false);
    // Releasing someone else's lease does nothing; releasing one's own frees the app at once.
    await releaseLease(serverA, app, "server-a");
    expect((await acquireLease(serverA, app, "server-a", 30_000)).acquired).toBe(false);
    await releaseLease(serverB, app, "server-b");
    expect(await acquireLease(serverA, app, "server-a", 30_000)).toEqual({ acquired: true, tookOverFrom: null });
  });

  it("a server SIGKILLed while holding the lease: the other is refused until the lease lapses, then takes over", async () => {
    const app = await newApp();
    const leaseMs = 1_500;
    const holder = spawn(process.execPath, ["--import", "tsx", "lib/locks/test-postgres-lease-holder.ts"], {
      env: { ...process.env, DATABASE_URL: url, APP_PK: String(app), OWNER: "server-killed", LEASE_MS: String(leaseMs) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [first] = (await once(holder.stdout, "data")) as [Buffer];
    expect(first.toString()).toBe("held\n");
    // While it runs it renews: still refused after a whole lease.
    await new Promise((r) => setTimeout(r, leaseMs + 300));
    expect(await acquireLease(serverB, app, "server-b", leaseMs)).toMatchObject({ acquired: false, owner: "server-killed" });

    holder.kill("SIGKILL");
    await once(holder, "exit");
    const killedAt = Date.now();
    expect((await acquireLease(serverB, app, "server-b", leaseMs)).acquired).toBe(false);
    let taken: Awaited<ReturnType<typeof acquireLease>> | undefined;
    while (Date.now() - killedAt < leaseMs * 4) {
      const attempt = await acquireLease(serverB, app, "server-b", leaseMs);
      if (attempt.acquired) {
        taken = attempt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(taken).toEqual({ acquired: true, tookOverFrom: "server-killed" });
  });
});
