/**
 * Benchmark of schema v2 (issue 25; lib/clickhouse/schema-v2.ts) on two 18.16 shards:
 * `npm run bench -- --only clickhouse-v2 [--calls N]`. Data generated inside ClickHouse
 * (bench/clickhouse-v2-data.ts: the platform mix's shape, a tenth of the calls re-synced
 * and left unmerged), the views filling the pre-aggregates. It measures the schema, not
 * yet Callboard: the engine's reports still read schema v1, so each query here is the
 * one a v2 report would send, timed over HTTP on the first shard (p50 / p95), with where
 * its time goes on each shard (system.query_log: rows and bytes read, milliseconds), and
 * the disk a call takes with its participants.
 */
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { BENCH_APPS, onServer } from "./clickhouse-data";
import { generateV2Calls } from "./clickhouse-v2-data";
import { NOW } from "./http-reports";
import type { BenchRow } from "./bench-row";
import { filters } from "@/lib/analytics/filters";
import type { AppRef } from "@/lib/analytics/scope";
import { getConcurrencyHeatmap, type HeatmapSource } from "@/lib/analytics/engines/clickhouse";
import { openClickHouse } from "@/lib/clickhouse/client";
import { migrateClickHouse } from "@/lib/clickhouse/migrate";
import type { TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { decodeClosed } from "@/lib/clickhouse/schema-v2";

const DAY = 86_400;
const DB = "bench_v2";
const load = () => `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
const log = (line: string) => console.log(line);

/** The queries a v2 report sends (all apps unless said; the bench data's apps are 1–4). */
function queries(): Array<[name: string, sql: string]> {
  const month = `start_at >= toDateTime(${NOW - 30 * DAY}) AND start_at < toDateTime(${NOW})`;
  const monthBuckets = `bucket >= toDateTime(${NOW - 30 * DAY}) AND bucket < toDateTime(${NOW})`;
  return [
    ["usage/apps, all time (monthly pre-aggregate)", `SELECT app_pk, sum(calls) AS c, sum(total_audio_minutes_x1000) AS a, sum(total_video_minutes_x1000) AS v FROM ${DB}.calls_by_month GROUP BY app_pk HAVING c != 0 ORDER BY app_pk`],
    ["breakdown type × mode × status, all time (monthly pre-aggregate)", `SELECT ${decodeClosed("type")} AS t, ${decodeClosed("mode")} AS m, ${decodeClosed("status")} AS s, sum(calls) AS c, sum(total_duration_minutes_x1000) AS d FROM ${DB}.calls_by_month GROUP BY t, m, s HAVING c != 0 ORDER BY t, m, s`],
    ["breakdown type × mode × status, last 30 days (15-minute pre-aggregate)", `SELECT ${decodeClosed("type")} AS t, ${decodeClosed("mode")} AS m, ${decodeClosed("status")} AS s, sum(calls) AS c, sum(total_duration_minutes_x1000) AS d FROM ${DB}.calls_by_bucket WHERE ${monthBuckets} GROUP BY t, m, s HAVING c != 0 ORDER BY t, m, s`],
    ["daily series, all time, in Asia/Kolkata (15-minute pre-aggregate)", `SELECT toDate(bucket, 'Asia/Kolkata') AS day, sum(calls) AS c, sum(total_audio_minutes_x1000) AS a, sum(total_video_minutes_x1000) AS v FROM ${DB}.calls_by_bucket GROUP BY day HAVING c != 0 ORDER BY day`],
    ["heatmap weekday × hour, last 30 days, Asia/Kathmandu (15-minute pre-aggregate)", `SELECT toDayOfWeek(bucket, 'Asia/Kathmandu') AS w, toHour(bucket, 'Asia/Kathmandu') AS h, sum(calls) AS c FROM ${DB}.calls_by_bucket WHERE ${monthBuckets} GROUP BY w, h HAVING c != 0 ORDER BY w, h`],
    ["breakdown type × mode × status, all time (signed rows)", `SELECT ${decodeClosed("type")} AS t, ${decodeClosed("mode")} AS m, ${decodeClosed("status")} AS s, sum(sign) AS c, sum(sign * total_duration_minutes_x1000) AS d FROM ${DB}.calls_v2 GROUP BY t, m, s HAVING c != 0 ORDER BY t, m, s`],
    ["calls of one app, last 30 days, count (signed rows)", `SELECT sum(sign) AS c FROM ${DB}.calls_v2 WHERE app_pk = 1 AND ${month}`],
    ["calls list, one app, newest 50 of the last 30 days (signed rows, live states)", `SELECT session_id, start_at, any(status) AS status, any(duration_seconds) AS d FROM ${DB}.calls_v2 WHERE app_pk = 1 AND ${month} GROUP BY app_pk, start_at, session_id, version HAVING sum(sign) > 0 ORDER BY start_at DESC, session_id LIMIT 50`],
    ["participants, all time, top 50 by minutes (pre-aggregate)", `SELECT app_pk, uid_code, sum(calls) AS c, sum(total_duration_minutes_x1000) AS m FROM ${DB}.participants_by_month GROUP BY app_pk, uid_code HAVING c != 0 ORDER BY m DESC, app_pk, uid_code LIMIT 50`],
    ["participants, last 30 days, top 50 by minutes (signed rows)", `SELECT app_pk, uid_code, sum(sign * first_of_uid) AS c, sum(sign * total_duration_minutes_x1000) AS m FROM ${DB}.participants_v2 WHERE ${month} GROUP BY app_pk, uid_code HAVING c != 0 ORDER BY m DESC, app_pk, uid_code LIMIT 50`],
    ["one call's raw record, by key", `SELECT raw FROM ${DB}.call_raw FINAL WHERE app_pk = 1 AND session_id = (SELECT any(session_id) FROM ${DB}.call_raw_local WHERE app_pk = 1)`],
  ];
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

function diskBytes(dirs: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const dir of dirs) {
    const r = spawnSync("sh", ["-c", `du -sb ${JSON.stringify(path.join(dir, "data", "data", DB))}/*`], { encoding: "utf8" });
    for (const line of r.stdout.trim().split("\n")) {
      const [bytes, p] = line.split("\t");
      if (!p) continue;
      const table = decodeURIComponent(path.basename(p));
      out.set(table, (out.get(table) ?? 0) + Number(bytes));
    }
  }
  return out;
}

export async function runClickHouseV2Bench({ calls = 10_000_000, runs = 15 }: { calls?: number; runs?: number } = {}): Promise<BenchRow[]> {
  const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
  const ch = await startClickHouse({ shards: 2, profileSettings: { log_queries: 1, max_threads: 2 } });
  const rows: BenchRow[] = [];
  const area = `clickhouse v2 schema ${(calls / 1e6).toLocaleString("en")}M (2 × 18.16 shards)`;
  try {
    // Every table the generator fills (recordings, client sessions too), as `npm run db:migrate` creates them.
    await migrateClickHouse(ch.config(DB));
    const genSeconds = await generateV2Calls(ch.servers, ch.password, DB, calls, log);
    rows.push({ area, metric: `data: generated in ClickHouse (INSERT … SELECT from numbers(), platform-mix shape, 1 in 10 re-synced and unmerged; ${load()})`, target: "", measured: `${genSeconds.toFixed(0)} s` });
    const [counts] = JSON.parse(await onServer(ch.servers[0], ch.password, `SELECT sum(sign) AS live, count() AS rows, (SELECT count() FROM ${DB}.participants_v2) AS prows FROM ${DB}.calls_v2 FORMAT JSON`)).data as Array<{ live: string; rows: string; prows: string }>;
    rows.push({ area, metric: "live calls / signed call rows / signed participant rows", target: "", measured: `${Number(counts.live).toLocaleString("en")} / ${Number(counts.rows).toLocaleString("en")} / ${Number(counts.prows).toLocaleString("en")}` });
    const disk = diskBytes(ch.servers.map((s) => s.dir));
    const per = (names: string[]) => names.reduce((sum, n) => sum + (disk.get(`${n}_local`) ?? 0), 0) / calls;
    const withParticipants = per(["calls_v2", "participants_v2", "calls_by_bucket", "calls_by_month", "participants_by_month", "participants_by_month_dims", "concurrency_by_quarter", "uids"]);
    rows.push({ area, metric: "disk per call with its participants and the pre-aggregates (no raw JSON)", target: "<= 150 bytes", measured: `${withParticipants.toFixed(0)} bytes`, ok: withParticipants <= 150 });
    rows.push({ area, metric: "disk per call: raw JSON (call_raw, read by key only)", target: "", measured: `${per(["call_raw"]).toFixed(0)} bytes` });
    rows.push({ area, metric: "disk per call by table", target: "", measured: [...disk.entries()].filter(([n]) => n.endsWith("_local")).map(([n, b]) => `${n.replace(/_local$/, "")} ${(b / calls).toFixed(1)}`).join(", ") });
    const target = calls >= 50_000_000 ? 2000 : 300;
    for (const [name, sql] of queries()) {
      const times: number[] = [];
      const ids: string[] = [];
      for (let r = 0; r < runs; r++) {
        const id = `bench-v2-${r}-${Math.random().toString(36).slice(2)}`;
        const t = performance.now();
        const url = `http://${ch.servers[0].host}:${ch.servers[0].httpPort}/?user=default&password=${encodeURIComponent(ch.password)}&query_id=${id}`;
        const res = await fetch(url, { method: "POST", body: sql + " FORMAT JSONEachRow" });
        const body = await res.text();
        if (!res.ok) throw new Error(`${name}: ${body.slice(0, 300)}`);
        times.push(performance.now() - t);
        ids.push(id);
      }
      const p95 = pct(times, 95);
      rows.push({ area, metric: `${name} (p50 / p95 of ${runs}, ${load()})`, target: `p95 < ${target} ms`, measured: `${pct(times, 50).toFixed(1)} / ${p95.toFixed(1)} ms`, ok: p95 < target });
      // Where the time of the last run went, shard by shard (each shard logs its part of a Distributed query).
      await Promise.all(ch.servers.map((s) => onServer(s, ch.password, "SYSTEM FLUSH LOGS")));
      const last = ids[ids.length - 1];
      const parts = await Promise.all(ch.servers.map(async (s, i) => {
        const out = await onServer(s, ch.password, `SELECT sum(read_rows) AS r, sum(read_bytes) AS b, max(query_duration_ms) AS ms FROM system.query_log WHERE type = 2 AND (query_id = '${last}' OR initial_query_id = '${last}') FORMAT TSV`);
        const [r, b, ms] = out.trim().split("\t").map(Number);
        return `shard ${i + 1}${i === 0 ? " (initiator: its read counts include what the other shard sent)" : ""}: ${(r / 1e6).toFixed(2)}M rows, ${(b / 1e6).toFixed(0)} MB, ${ms} ms`;
      }));
      rows.push({ area, metric: `  where it went (last run; system.query_log)`, target: "", measured: parts.join("; ") });
    }
    rows.push(...(await heatmapAB(ch, area, runs, target)));
  } finally {
    await ch.stop();
  }
  return rows;
}

/**
 * The concurrency heatmap through the ClickHouse engine (the bench routes' filters: all
 * time in Berlin; audio & ended), A/B in the same run, interleaved: from
 * concurrency_by_quarter (migration 0011) against the signed rows (the read it replaced),
 * with the rows each read per shard (system.query_log).
 */
async function heatmapAB(ch: TestClickHouse, area: string, runs: number, target: number): Promise<BenchRow[]> {
  const out: BenchRow[] = [];
  const client = openClickHouse(ch.config(DB));
  const apps: AppRef[] = Array.from({ length: BENCH_APPS }, (_, i) => ({ pk: i + 1, appId: `bench${i + 1}`, name: `Bench ${i + 1}` }));
  const ctx = { ch: client, db: () => { throw new Error("the bench's apps are given"); }, apps };
  try {
    const [quarterRows] = JSON.parse(await onServer(ch.servers[0], ch.password, `SELECT count() AS n FROM ${DB}.concurrency_by_quarter FORMAT JSON`)).data as Array<{ n: string }>;
    out.push({ area, metric: "concurrency_by_quarter rows (both shards, unmerged)", target: "", measured: Number(quarterRows.n).toLocaleString("en") });
    for (const [name, f] of [["all time, Europe/Berlin", { tz: "Europe/Berlin" }], ["all time, audio & ended", { type: "audio", status: "ended" }]] as const) {
      const times: Record<HeatmapSource, number[]> = { best: [], rows: [] };
      for (let r = 0; r < runs; r++) {
        for (const source of ["best", "rows"] as const) {
          const t = performance.now();
          await getConcurrencyHeatmap(ctx, filters(f), { appPks: "all" }, undefined, source);
          times[source].push(performance.now() - t);
        }
      }
      const p50 = (s: HeatmapSource) => pct(times[s], 50);
      out.push({
        area, metric: `heatmap ${name} through the engine: pre-aggregate vs signed rows (p50 / p95 of ${runs} each, interleaved, ${load()})`, target: `p95 < ${target} ms`,
        measured: `${p50("best").toFixed(0)} / ${pct(times.best, 95).toFixed(0)} ms vs ${p50("rows").toFixed(0)} / ${pct(times.rows, 95).toFixed(0)} ms (${(p50("rows") / p50("best")).toFixed(1)}× at p50)`,
        ok: pct(times.best, 95) < target,
      });
    }
    await Promise.all(ch.servers.map((s) => onServer(s, ch.password, "SYSTEM FLUSH LOGS")));
    for (const [table, like] of [["concurrency_by_quarter", "%concurrency_by_quarter%"], ["calls_v2", "%q_start%calls_v2%"]]) {
      const parts = await Promise.all(ch.servers.map(async (s, i) => {
        const tsv = await onServer(s, ch.password, `SELECT read_rows, read_bytes, query_duration_ms FROM system.query_log WHERE type = 2 AND query LIKE '${like}' AND query NOT LIKE '%system.query_log%' ORDER BY event_time DESC, is_initial_query LIMIT 1 FORMAT TSV`);
        const [r, b, ms] = tsv.trim().split("\t").map(Number);
        return `shard ${i + 1}: ${(r / 1e6).toFixed(2)}M rows, ${(b / 1e6).toFixed(0)} MB, ${ms} ms`;
      }));
      out.push({ area, metric: `  heatmap from ${table}: where it went (last run; the initiator's read includes what the other shard sent; system.query_log)`, target: "", measured: parts.join("; ") });
    }
  } finally {
    await client.close();
  }
  return out;
}
