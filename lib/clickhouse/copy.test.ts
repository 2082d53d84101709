import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { allCalls, openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { filters } from "@/lib/analytics/filters";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";
import { openClickHouse, type ClickHouse } from "./client";
import { CopyMismatchError, copyToClickHouse, type CopyProgress } from "./copy";
import { migrateClickHouse } from "./migrate";
import { callRow } from "./rows";
import { CallWriterV2, openShardsV2 } from "./writer-v2";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";

process.env.AUTH_SECRET ??= "copy-test-secret-at-least-32-characters!!";

/**
 * `npm run warehouse -- copy --to clickhouse`: every fact of a SQLite warehouse reaches
 * ClickHouse once, whatever is interrupted and run again.
 */

const BASE = 1_760_000_000;

function fillWarehouse(db: Db, calls: number, seed: number): void {
  const r = rng(seed);
  writeCalls(db, Array.from({ length: calls }, (_, i) => randomCall(r, i, BASE, 90 * 86_400)));
  const s = db.$client;
  const rec = s.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, start_time, received_ms) VALUES (?, ?, ?, ?, ?)");
  const del = s.prepare(`INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, session_id, outcome, body, received_ms, last_received_ms)
    VALUES (?, ?, ?, 'wh', ?, 'applied', ?, ?, ?)`);
  const cnt = s.prepare("INSERT INTO event_counts (app_pk, trigger, bucket_start, count) VALUES (?, ?, ?, ?)");
  const cs = s.prepare(`INSERT INTO client_sessions (app_pk, session_id, occupant, joined_at, counted_at, trigger, platform, is_audio_only, received_ms, seq)
    VALUES (?, ?, ?, ?, ?, 'call_participant_joined', ?, ?, ?, ?)`);
  s.transaction(() => {
    for (let i = 0; i < 300; i++) rec.run(1 + (i % 3), `rec-${i}`, `https://r.example/${i}`, i % 17 === 0 ? null : BASE + i, 1_700_000_000_000 + i);
    for (let i = 0; i < 400; i++) del.run(1 + (i % 3), `key-${i}`, i % 2 ? "message_sent" : "call_ended", `s-${i}`, JSON.stringify({ trigger: "message_sent", data: { sentAt: BASE + i } }), 1_700_000_000_000 + i, 1_700_000_000_000 + i);
    for (let i = 0; i < 200; i++) cnt.run(1 + (i % 3), i % 2 ? "message_sent" : "group_created", BASE + 900 * i, 1 + i);
    for (let i = 0; i < 250; i++) cs.run(1 + (i % 3), `s-${i % 90}`, `p${i}`, i % 9 ? BASE + i : null, BASE + i, i % 4 ? "web" : null, i % 5 ? 0 : null, 1_700_000_000_000 + i, i + 1);
  })();
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("copy --to clickhouse", { timeout: 180_000 }, () => {
  let server: TestClickHouse;
  const open: ClickHouse[] = [];
  const client = async (database: string) => {
    await migrateClickHouse(server.config(database));
    const ch = openClickHouse(server.config(database));
    const shards = await openShardsV2(ch, server.config(database));
    open.push(ch, ...shards.map((s) => s.client));
    writers.set(ch, new CallWriterV2(ch, shards));
    return ch;
  };
  /** Each database's v2 writer (its shards' clients). */
  const writers = new Map<ClickHouse, CallWriterV2>();
  // v1 beside v2 (not the default since the reports read v2) unless a test asks for v2 alone: most tests check both.
  const copy = (db: Db, ch: ClickHouse, options: Parameters<typeof copyToClickHouse>[2] = {}) => copyToClickHouse(db, ch, { writerV2: writers.get(ch), writeV1Facts: true, ...options });
  /** v2's live calls and totals (signed sums, no FINAL): the same as v1's. */
  const sumsV2 = async (ch: ClickHouse) =>
    (await ch.rows<Record<string, number>>(
      `SELECT sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audio, (SELECT sum(sign) FROM ${ch.placement.database}.participants_v2) AS participants FROM ${ch.placement.database}.calls_v2`,
    ))[0];
  const sums = async (ch: ClickHouse) =>
    (await ch.rows<Record<string, number>>(`SELECT count() AS calls, sum(total_audio_minutes_x1000) AS audio, sum(length(p_uid)) AS participants FROM ${ch.placement.database}.calls FINAL WHERE deleted = 0`))[0];

  beforeAll(async () => {
    server = await startClickHouse({ shards: 2 });
  });
  afterAll(async () => {
    await Promise.all(open.map((ch) => ch.close()));
    await server?.stop();
  }, 300_000); // two shards stopping and their many small parts removed, on a box at load 15+

  // Three copies and a restart of 3,000 calls into both schemas on two shards: minutes on a loaded box.
  it("copies every table, resumes after an interruption, and never double counts", { timeout: 360_000 }, async () => {
    const db = openFixtureDb("copy-resume");
    fillWarehouse(db, 3000, 1);
    const ch = await client("copy_resume");
    const abort = new AbortController();
    const seen: CopyProgress[] = [];
    await expect(
      copy(db, ch, {
        batchSize: 250,
        signal: abort.signal,
        onProgress: (p) => {
          seen.push(p);
          if (p.table === "calls" && p.done >= 1000) abort.abort(); // killed in the middle of the calls
        },
      }),
    ).rejects.toThrow(/interrupted/);
    expect((await sums(ch)).calls).toBe(1000);
    expect((await sumsV2(ch)).calls).toBe(1000);
    const progress: CopyProgress[] = [];
    const counts = await copy(db, ch, { batchSize: 250, onProgress: (p) => progress.push(p) });
    // Resumed from the checkpoint: the calls left, not all of them again.
    expect(counts.find((c) => c.table === "calls")).toMatchObject({ copied: 2000, sqlite: 3000, clickhouse: 3000 });
    expect(progress.filter((p) => p.table === "calls").at(-1)).toMatchObject({ done: 2000, total: 2000 });
    for (const c of counts) expect(c.clickhouse, c.table).toBe(c.sqlite);
    expect(counts.find((c) => c.table === "client_sessions")).toMatchObject({ copied: 250, sqlite: 250 });
    const expected = db.$client.prepare("SELECT count(*) AS calls, CAST(round(sum(total_audio_minutes) * 1000) AS INTEGER) AS audio, (SELECT count(*) FROM call_participants) AS participants FROM calls").get();
    expect(await sums(ch)).toEqual(expected);
    // Run again, and again from scratch: the same facts, counted once.
    expect(await sumsV2(ch)).toEqual(expected);
    expect(counts.find((c) => c.table === "calls_v2")).toMatchObject({ sqlite: 3000, clickhouse: 3000 });
    await copy(db, ch, { batchSize: 700 });
    await copy(db, ch, { restart: true });
    expect(await sums(ch)).toEqual(expected);
    expect(await sumsV2(ch)).toEqual(expected);
  });

  it("copies into schema v2 alone when v1 is switched off, and a changed call cancels what it replaces", async () => {
    const db = openFixtureDb("copy-v2-only");
    fillWarehouse(db, 800, 5);
    const ch = await client("copy_v2_only");
    const counts = await copy(db, ch, { batchSize: 300, writeV1Facts: false });
    expect(counts.map((c) => c.table)).not.toContain("calls");
    expect(counts.find((c) => c.table === "calls_v2")).toMatchObject({ copied: 800, sqlite: 800, clickhouse: 800 });
    expect((await sums(ch)).calls).toBe(0);
    const s = db.$client;
    const pk = s.prepare("SELECT pk FROM calls WHERE total_participants >= 1 ORDER BY pk LIMIT 1").pluck().get() as number;
    s.prepare("UPDATE calls SET total_audio_minutes = 123.456, updated_ms = ? WHERE pk = ?").run(Date.now(), pk);
    s.prepare("DELETE FROM call_participants WHERE call_pk = ?").run(pk);
    await copy(db, ch, { writeV1Facts: false });
    const expected = s.prepare("SELECT count(*) AS calls, CAST(round(sum(total_audio_minutes) * 1000) AS INTEGER) AS audio, (SELECT count(*) FROM call_participants) AS participants FROM calls").get();
    expect(await sumsV2(ch)).toEqual(expected);
    const [cancels] = await ch.rows<{ n: number }>("SELECT count() AS n FROM copy_v2_only.calls_v2 WHERE sign = -1");
    expect(Number(cancels.n)).toBe(1);
  });

  it("copies again the rows changed since the last run (a copy made while the server runs converges)", async () => {
    const db = openFixtureDb("copy-changed");
    fillWarehouse(db, 500, 2);
    const ch = await client("copy_changed");
    await copy(db, ch);
    const s = db.$client;
    const pk = s.prepare("SELECT pk FROM calls WHERE total_participants >= 1 ORDER BY pk LIMIT 1").pluck().get() as number;
    s.prepare("UPDATE calls SET total_audio_minutes = 123.456, updated_ms = ? WHERE pk = ?").run(Date.now(), pk);
    s.prepare("DELETE FROM call_participants WHERE call_pk = ?").run(pk);
    s.prepare("UPDATE webhook_deliveries SET repeat_count = 7, last_received_ms = ? WHERE pk = 1").run(Date.now());
    // A leave after the copy: the session takes the next change stamp.
    s.prepare("UPDATE client_sessions SET left_at = ?, seq = (SELECT max(seq) + 1 FROM client_sessions) WHERE occupant = 'p7'").run(BASE + 600);
    const counts = await copy(db, ch);
    expect(counts.find((c) => c.table === "calls")?.copied).toBe(1);
    expect(counts.find((c) => c.table === "client_sessions")).toMatchObject({ copied: 1, sqlite: 250, clickhouse: 250 });
    const left = await ch.rows<{ left_at: number }>("SELECT left_at FROM copy_changed.client_sessions FINAL WHERE occupant = 'p7'");
    expect(left.map((r) => Number(r.left_at))).toEqual([BASE + 600]);
    const session = s.prepare("SELECT session_id FROM calls WHERE pk = ?").pluck().get(pk) as string;
    const [row] = await ch.rows<{ audio: number; n: number }>(`SELECT total_audio_minutes_x1000 AS audio, length(p_uid) AS n FROM copy_changed.calls FINAL WHERE session_id = '${session}'`);
    expect(row).toEqual({ audio: 123_456, n: 0 });
    const [d] = await ch.rows<{ r: number }>("SELECT repeat_count AS r FROM copy_changed.webhook_deliveries FINAL WHERE idem_key = 'key-0'");
    expect(d.r).toBe(7);
    const [v2] = await ch.rows<{ audio: number; n: number }>(
      `SELECT sum(sign * total_audio_minutes_x1000) AS audio, (SELECT sum(sign) FROM copy_changed.participants_v2 WHERE session_code = cityHash64('${session}')) AS n FROM copy_changed.calls_v2 WHERE session_id = '${session}'`,
    );
    expect(v2).toEqual({ audio: 123_456, n: 0 });
  });

  it("keeps the source's order: calls with equal keys list as the in-memory engine lists them (arrival = the SQLite pk)", async () => {
    const db = openFixtureDb("copy-order");
    fillWarehouse(db, 1200, 5);
    const ch = await client("copy_order");
    // Interrupted once, resumed, and a call changed in between (copied again).
    const abort = new AbortController();
    await expect(copy(db, ch, { batchSize: 100, signal: abort.signal, onProgress: (p) => p.table === "calls" && p.done >= 500 && abort.abort() })).rejects.toThrow(/interrupted/);
    db.$client.prepare("UPDATE calls SET total_audio_minutes = 0, total_video_minutes = 0, updated_ms = ? WHERE pk = 7").run(Date.now());
    await copy(db, ch, { batchSize: 300 });
    const arrivals = await ch.rows<{ app: number; session: string; arrival: number }>("SELECT app_pk AS app, session_id AS session, argMax(arrival, version) AS arrival FROM copy_order.calls GROUP BY app_pk, session_id ORDER BY arrival");
    expect(arrivals).toEqual(db.$client.prepare("SELECT app_pk AS app, session_id AS session, pk AS arrival FROM calls ORDER BY pk").all());
    const mem = createMemoryEngine({ db: () => db });
    const engine = createClickHouseEngine({ ch, db: () => db });
    const ids = (rows: Array<{ app: string; sessionId: string }>) => rows.map((r) => `${r.app}/${r.sessionId}`);
    for (const sort of ["start", "duration", "participants", "minutes"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const f = filters({ sort, order });
        expect(ids(await allCalls(engine, f)), `${sort} ${order}`).toEqual(ids(await allCalls(mem, f)));
      }
    }
    // Something to order: most calls share their participant count with hundreds of others.
    const runs = db.$client.prepare("SELECT max(n) FROM (SELECT count(*) AS n FROM calls GROUP BY total_participants)").pluck().get() as number;
    expect(runs).toBeGreaterThan(200);
  });

  it("fails loudly when ClickHouse and SQLite disagree after the copy", async () => {
    const db = openFixtureDb("copy-mismatch");
    fillWarehouse(db, 200, 3);
    const ch = await client("copy_mismatch");
    await copy(db, ch);
    // A call ClickHouse has and SQLite does not (written there by someone else).
    const stray = callRow({
      appPk: 1, sessionId: "stray", version: 1, mid: null, type: "audio", mode: "call", status: "ended", initiator: null, receiver: null,
      receiverType: "user", initiatedAt: BASE, startedAt: BASE, endedAt: BASE + 60, startAt: BASE, platformHasRecording: false,
      totalAudioMinutes: 1, totalVideoMinutes: 0, totalDurationMinutes: 1, durationSeconds: 60, totalParticipants: 0, source: "sync",
      contentHash: null, raw: null, firstSeenMs: 1, updatedMs: 1, participants: [], arrival: 0,
    });
    await ch.insert("calls", [stray]);
    const error = await copy(db, ch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CopyMismatchError);
    expect((error as Error).message).toMatch(/calls: SQLite 200, ClickHouse 201/);
  });

  it("runs as npm run warehouse -- copy --to clickhouse, survives SIGKILL mid-run, and never prints the password", async () => {
    const db = openFixtureDb("copy-cli");
    fillWarehouse(db, 6000, 4);
    const file = db.$client.name;
    db.$client.close();
    const env = { ...process.env, DATABASE_PATH: file, ...server.env("copy_cli"), LOG_LEVEL: "silent" };
    const ch = openClickHouse(server.config("copy_cli"));
    open.push(ch);
    const run = (args: string[], killAfterCalls?: number) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "scripts/warehouse.ts", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (b: Buffer) => (out += b.toString()));
        child.stderr.on("data", (b: Buffer) => (out += b.toString()));
        // Killed once its checkpoint says it is in the middle of the calls.
        const watch = killAfterCalls
          ? setInterval(() => {
              void ch
                .rows<{ pk: number }>("SELECT last_pk AS pk FROM copy_cli.copy_checkpoints FINAL WHERE table_name = 'calls'")
                .then((r) => (r[0]?.pk ?? 0) >= killAfterCalls && child.kill("SIGKILL"))
                .catch(() => undefined);
            }, 20)
          : undefined;
        child.on("exit", (code) => {
          clearInterval(watch);
          resolve({ code, out });
        });
      });
    const killed = await run(["copy", "--to", "clickhouse", "--batch-size", "100"], 1000);
    expect(killed.code).toBeNull(); // SIGKILL, half way
    expect((await sums(ch)).calls).toBeLessThan(6000);
    expect((await sumsV2(ch)).calls).toBeLessThan(6000);
    const done = await run(["copy", "--to", "clickhouse", "--batch-size", "500", "--no-progress"]);
    expect(done.out).toContain("Count check passed");
    expect(done.code).toBe(0);
    expect(done.out).not.toContain(server.password);
    expect(done.out).not.toContain(encodeURIComponent(server.password));
    expect((await sums(ch)).calls).toBe(0); // the command writes schema v2 alone (WRITE_V1_FACTS off)
    expect((await sumsV2(ch)).calls).toBe(6000);
    const missing = await run(["copy"]);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/--to/);
  }, 120_000);
});
