import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type Scope } from "@/lib/analytics";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { createClickHouseEngine } from "./engine";

process.env.AUTH_SECRET ??= "participants-reads-secret-at-least-32-chars!!";

/**
 * The participants reports as signed sums of participant rows (decision 0034,
 * "Participants as signed sums"): filtered by the call dimensions participant rows carry
 * (type, mode, status, receiver type, participant count), no statement reads the calls or
 * looks cancel rows up by state; hasRecording, uid and weekday/hour still look the calls
 * up. Same answers: the parity suite (parity.integration.test.ts).
 */

const PARTICIPANT_REPORTS = ["participants", "participants-combined", "engagement"] as const;

describe("ClickHouse engine: participants read from participant rows alone (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let recording: ClickHouse;

  beforeAll(async () => {
    db = openFixtureDb("ch-participants-reads");
    const r = rng(11);
    writeCalls(db, Array.from({ length: 300 }, (_, i) => randomCall(r, i, 1_760_000_000, 30 * 86_400)));
    chdb = openChdb("participants_reads");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    recording = {
      ...chdb,
      rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)),
      stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)),
    };
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  const sentFor = async (f: ReturnType<typeof filters>) => {
    const engine = createClickHouseEngine({ db: () => db, ch: recording });
    const scope: Scope = { appPks: "all" };
    sent.length = 0;
    const answers: string[] = [];
    for (const name of PARTICIPANT_REPORTS) {
      answers.push(JSON.stringify(await engine.report(name, f, scope)));
      for await (const batch of await engine.csv(name, f, scope)) answers.push(JSON.stringify(batch));
    }
    answers.push(JSON.stringify(await engine.report("apps", f, scope)));
    return { queries: sent.filter((q) => q.includes("participants_v2")), answers };
  };

  it("reads no calls and no state keys for the dimensions the rows carry", async () => {
    const { queries, answers } = await sentFor(filters({ type: "video", mode: "meet", status: "ended", receiverType: "group", participantsCount: 3 }));
    expect(queries.length).toBeGreaterThan(5);
    for (const q of queries) {
      expect(q, "no lookup of the calls").not.toMatch(/calls_v2/);
      expect(q, "no call-state keys").not.toMatch(/version \* 1000003/);
    }
    // Something was counted: the filters match calls of the fixture.
    expect(answers.join("")).toMatch(/"calls":[1-9]/);
  });

  it("still looks the calls up for what the rows do not carry", async () => {
    for (const f of [filters({ hasRecording: true }), filters({ uid: "alice" }), filters({ weekday: 1, hour: 9 })]) {
      const { queries } = await sentFor(f);
      expect(queries.some((q) => /participants_v2[\s\S]*calls_v2/.test(q)), JSON.stringify(f)).toBe(true);
    }
  });
});
