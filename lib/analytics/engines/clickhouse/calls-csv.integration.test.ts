import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateV2Calls } from "@/bench/clickhouse-v2-data";
import { migrateClickHouse, openClickHouse, sql, type ClickHouse } from "@/lib/clickhouse";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { CALL_RAW_COLUMNS, PARTICIPANT_COLUMNS } from "../../csv-columns";
import { filters } from "../../filters";
import { REPORT_CSV_WRITERS } from "../../report-csv-writers";
import { openFixtureDb } from "../../test-fixtures";
import { csvBatchStream, csvContext, csvRawStream } from "@/lib/export/csv";
import { createClickHouseEngine } from "./engine";
import { callsCsvBytes, callsCsvFields } from "./reports/calls-csv";
import { participantsOrder, participantsQuery, type ParticipantRaw } from "./reports/usage";
import { withApps } from "./context";

/**
 * The calls CSV from ClickHouse's RowBinary (reports/calls-csv.ts) on two 18.16 shards:
 * the same bytes as the raw-row writer (csvRawStream) over the same rows read as JSON,
 * and the participants CSV (reports/participants-csv.ts) the rows writer's,
 * for hostile texts (quotes, commas, line breaks, formula starts, non-ASCII, empty),
 * NULLs, values outside the closed sets and zones with odd offsets; 200,000 calls
 * streamed with memory bounded, every row there; a client that leaves stops the query on
 * every shard; a query that fails after its first rows is an error, never a short file.
 */
process.env.AUTH_SECRET ??= "calls-csv-test-secret-at-least-32-characters!";

const DB = "callboard_calls_csv";
const CALLS = 200_000;
const ALL = { appPks: "all" as const };

/** Texts a CSV must quote or guard, and NULL. */
const HOSTILE = ['say "hi"', "a,b", "line\nbreak", "cr\rhere", "=cmd|' /C calc'!A0", "+1555", "-x", "@h", "\ttab", "zoë", "用户42", "🦄", "", null];

describe.skipIf(CLICKHOUSE_SKIP_REASON)("the calls and participants CSVs from RowBinary", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const db = openFixtureDb("ch-calls-csv");
  // The generated calls' apps are pks 1–4 (bench/clickhouse-data.ts); the fixture has 1–3.
  db.$client.prepare("INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('app-four', 'App Four', 'us', 'x', 'xxxx')").run();
  const engine = () => createClickHouseEngine({ db: () => db, ch });
  const appIds = new Map((db.$client.prepare("SELECT pk, app_id FROM apps").all() as Array<{ pk: number; app_id: string }>).map((a) => [a.pk, a.app_id]));

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    await migrateClickHouse(cluster.config(DB));
    await generateV2Calls(cluster.servers, cluster.password, DB, CALLS, () => undefined);
    ch = openClickHouse(cluster.config(DB));
    // Hostile rows in app 4, a day of their own (1999) so a filter picks them alone.
    const base = 915_148_800;
    const rows = HOSTILE.flatMap((text, i) => [
      {
        sign: 1, version: 1, app_pk: 4, start_at: base + i * 60, session_id: text ?? `null-${i}`,
        type: i % 3 === 0 ? "other" : "video", type_other: i % 3 === 0 ? (text ?? "") : "", mode: "unset", mode_other: "", status: "ended", status_other: "",
        receiver_type: i % 2 === 0 ? "group" : "unset", receiver_type_other: "", platform_has_recording: i % 2, total_audio_minutes_x1000: -1234 * i,
        total_video_minutes_x1000: 1_000_000_007 * i, total_duration_minutes_x1000: 5, duration_seconds: 2 ** 40 + i, total_participants: 4_000_000_000 + i,
        initiated_at: i % 4 === 0 ? null : base + i * 60 - 7, started_at: i % 5 === 0 ? null : base + i * 60, ended_at: base + i * 60 + 3600, initiator: text, receiver: text === null ? "r" : `${text}${text}`,
        arrival: i, has_link: 0,
      },
    ]);
    await ch.insert("calls_v2", rows);
  }, 300_000);
  afterAll(async () => {
    await ch?.close();
    await cluster?.stop();
  });

  async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
    return new Response(stream).text();
  }

  it("writes the raw-row writer's bytes for hostile texts, NULLs, other values and big numbers, in odd zones", async () => {
    for (const tz of ["UTC", "Asia/Kathmandu", "America/St_Johns"]) {
      const f = filters({ from: 915_000_000, to: 916_000_000, tz, format: "csv" });
      const got = await text(REPORT_CSV_WRITERS.calls.csv.stream(await engine().csv("calls", f, ALL), undefined, csvContext(tz)));
      // The oracle: the same query's rows read as JSON, written by csvRawStream (the in-memory engine's raw-row writer).
      const json = await ch.rows<Record<string, unknown>>(
        `SELECT app_pk, session_id, if(type = 'unset', NULL, if(type = 'other', type_other, toString(type))) AS t, if(mode = 'unset', NULL, if(mode = 'other', mode_other, toString(mode))) AS m,
           if(status = 'unset', NULL, if(status = 'other', status_other, toString(status))) AS s, initiator, receiver,
           if(receiver_type = 'unset', NULL, if(receiver_type = 'other', receiver_type_other, toString(receiver_type))) AS rt, initiated_at, started_at, ended_at,
           toInt64(toUInt32(start_at)) AS st, platform_has_recording OR has_link AS rec, total_audio_minutes_x1000 AS a, total_video_minutes_x1000 AS v, total_duration_minutes_x1000 AS d,
           duration_seconds, total_participants FROM calls_v2 WHERE app_pk = 4 AND start_at < toDateTime(916000000) ORDER BY start_at DESC, arrival DESC`,
      );
      const raw = json.map((r) => [
        appIds.get(r.app_pk as number), r.session_id, r.t, r.m, r.s, r.initiator, r.receiver, r.rt, r.initiated_at, r.started_at, r.ended_at, r.st, r.rec,
        (r.a as number) / 1000, (r.v as number) / 1000, (r.d as number) / 1000, r.duration_seconds, r.total_participants,
      ]);
      const want = await text(csvRawStream([raw], CALL_RAW_COLUMNS, undefined, csvContext(tz)));
      expect(json).toHaveLength(HOSTILE.length);
      expect(got).toBe(want);
    }
  });

  it("writes the participants CSV as the rows writer does, in two zones and both orders", async () => {
    const ctx = await withApps({ ch, db: () => db });
    for (const [tz, sort, order] of [["UTC", "start", "desc"], ["Asia/Kathmandu", "minutes", "asc"]] as const) {
      const f = filters({ tz, sort, order, format: "csv", from: 1_000_000_000 });
      const got = await text(REPORT_CSV_WRITERS.participants.csv.stream(await engine().csv("participants", f, ALL), undefined, csvContext(tz)));
      // The oracle: the report's own query read as JSON rows, written by the rows writer (csv-stringify).
      const pks = [...appIds.keys()];
      const json = await ch.rows<ParticipantRaw>(sql`${participantsQuery(ctx, f, pks)} ${participantsOrder(f)}`.text);
      const rows = json.map((r) => ({
        app: appIds.get(r.appPk)!, uid: r.uid, calls: r.calls, joined: r.joined, unanswered: r.unanswered, audioMinutes: r.audioX1000 / 1000,
        videoMinutes: r.videoX1000 / 1000, totalMinutes: r.totalX1000 / 1000, firstCallAt: r.firstCallAt, lastCallAt: r.lastCallAt,
      }));
      async function* once() {
        yield rows;
      }
      const want = await text(csvBatchStream(once(), PARTICIPANT_COLUMNS, undefined, csvContext(tz)));
      expect(rows.length).toBeGreaterThan(1000);
      expect(got).toBe(want);
    }
  }, 120_000);

  it("streams 200,000 calls with every row, memory bounded while the client does not read", async () => {
    const [count] = await ch.rows<{ n: number }>("SELECT sum(sign) AS n FROM calls_v2 WHERE start_at >= toDateTime(1000000000)");
    expect(count.n).toBeGreaterThanOrEqual(CALLS * 0.99);
    const f = filters({ from: 1_000_000_000, format: "csv" });
    const body = REPORT_CSV_WRITERS.calls.csv.stream(await engine().csv("calls", f, ALL));
    const reader = body.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // The client stops reading: what the process holds must not grow with the export (the whole file is ~50 MB).
    global.gc?.();
    const before = process.memoryUsage();
    await new Promise((r) => setTimeout(r, 1500));
    const paused = process.memoryUsage();
    expect(paused.arrayBuffers - before.arrayBuffers).toBeLessThan(16 * 1024 * 1024);
    let lines = countLines(first.value!);
    let bytes = first.value!.length;
    let peak = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      lines += countLines(value);
      bytes += value.length;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    expect(lines).toBe(count.n + 1); // the header
    expect(bytes).toBeGreaterThan(CALLS * 100);
    expect(peak - before.rss).toBeLessThan(200 * 1024 * 1024);
  }, 120_000);

  it("stops the query on every shard when the client goes away part way", async () => {
    const controller = new AbortController();
    const f = filters({ format: "csv", sort: "minutes" });
    const body = REPORT_CSV_WRITERS.calls.csv.stream(await engine().csv("calls", f, ALL, controller.signal), controller.signal);
    const reader = body.getReader();
    await reader.read();
    const running = async () => {
      const counts = await Promise.all(
        cluster.servers.map(async (s) => {
          const shard = openClickHouse({ ...cluster.config(DB), origin: `http://${s.host}:${s.httpPort}` });
          try {
            const [r] = await shard.rows<{ n: number }>("SELECT count() AS n FROM system.processes WHERE query LIKE '%calls_v2%' AND query NOT LIKE '%system.processes%'");
            return r.n;
          } finally {
            await shard.close();
          }
        }),
      );
      return counts.reduce((a, b) => a + b, 0);
    };
    expect(await running()).toBeGreaterThan(0);
    controller.abort();
    await reader.cancel();
    const deadline = Date.now() + 15_000;
    let left = await running();
    while (left > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      left = await running();
    }
    expect(left).toBe(0);
  }, 60_000);

  it("fails with ClickHouse's code when the query fails after its first rows, never a short file", async () => {
    const fields = callsCsvFields({ type: "'audio'", mode: "NULL", status: "'ended'", receiverType: "NULL" }, "toInt64(number)", "throwIf(number = 300000)")
      .replaceAll("app_pk", "1")
      .replace(/CAST\(session_id/, "CAST(toString(number)")
      .replace(/CAST\((initiator|receiver) AS/g, "CAST(NULL AS")
      .replace(/CAST\((initiated_at|started_at|ended_at) AS/g, "CAST(NULL AS")
      .replace(/CAST\((total_audio_minutes_x1000|total_video_minutes_x1000|total_duration_minutes_x1000|duration_seconds|total_participants) AS/g, "CAST(number AS");
    const query = `SELECT ${fields} FROM system.numbers LIMIT 400000 SETTINGS max_block_size = 1000`;
    let batches = 0;
    const error = await (async () => {
      for await (const _ of callsCsvBytes(ch, query, { pks: [1], appId: () => "one" }, "UTC")) batches++;
    })().then(() => undefined, (e: unknown) => e);
    expect(batches).toBeGreaterThan(0);
    expect(error).toMatchObject({ name: "ClickHouseError", code: "395" });
  }, 60_000);
});

function countLines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) n++;
  return n;
}
