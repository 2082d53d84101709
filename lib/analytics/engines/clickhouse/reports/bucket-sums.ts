import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import type { Tables } from "../context";
import { callConditions } from "../conditions";
import { preAggregated, wholeBuckets } from "./call-sums";

/**
 * Sums of the matching calls per 15-minute bucket, read from `calls_by_bucket` for the
 * buckets lying whole in the range and from the signed rows for the range's edges (a
 * from / to at any second): the same split call-sums.ts does by month, one level finer
 * (docs/decisions/0034-clickhouse-schema-v2.md, "The daily series from the 15-minute
 * pre-aggregate (session 17)"). What the daily series sums.
 *
 * A subquery with, per source (pre-aggregate, edge rows), one row per `group_key`
 * (`groupKey` of the bucket's or the row's start as epoch seconds, an Int64 expression; e.g.
 * the local day) and the signed sums `c` (calls), `ax`, `vx` (audio, video minutes × 1000),
 * `ds` (duration seconds), `ps` (participants). Sum them per group_key, and leave out keys whose
 * `c` sums to 0, as the signed rows. Grouped inside each source so that, on a cluster, each
 * shard sends its groups (hundreds of days) rather than its rows to the initiator.
 *
 * Exact in any zone: every offset in use since the 1970s is a whole number of quarter
 * hours, and so is every transition instant, so a bucket (15 minutes from a multiple of
 * 900 s) lies in one local day and one local hour of any zone: its start's day is its
 * every call's day. The whole buckets are computed by ClickHouse with the view's own
 * `toStartOfFifteenMinutes`, on each shard, and the rows outside them are bounded by the
 * key to at most 15 minutes at each edge.
 *
 * `undefined` when the pre-aggregate cannot answer `f` (a uid, the weekday/hour filter, a
 * bound past a DateTime: call-sums.ts preAggregated): the caller reads the signed rows.
 */
export function bucketSumsSql(t: Tables, f: Filters, pks: readonly number[], groupKey: (epochSeconds: string) => string): Sql | undefined {
  // Without whole buckets (a `from` in the last bucket a DateTime holds), the signed rows answer.
  const whole = pks.length === 0 || !preAggregated(f) ? undefined : wholeBuckets(f.from, f.to);
  if (!whole) return undefined;
  const { first, end } = whole;
  const inBuckets = [first && `bucket >= ${first}`, end && `bucket < ${end}`].filter((x): x is string => !!x).map((x) => raw(x));
  const buckets = sql`SELECT ${raw(groupKey("toInt64(toUInt32(bucket))"))} AS group_key, sum(calls) AS c, sum(total_audio_minutes_x1000) AS ax,
      sum(total_video_minutes_x1000) AS vx, sum(duration_seconds) AS ds, sum(calls * total_participants) AS ps
    FROM ${t.callsByBucket} WHERE ${and([...callConditions(t, f, pks, { ignoreTime: true }), ...inBuckets])} GROUP BY group_key`;
  // The rows outside the whole buckets: before the first, from the end on (with first ≥ end, every row of the range).
  const outside = [first && `start_at < ${first}`, end && `start_at >= ${end}`].filter((x): x is string => !!x);
  if (outside.length === 0) return buckets; // all time: the pre-aggregate alone
  return sql`${buckets} UNION ALL SELECT ${raw(groupKey("toInt64(toUInt32(start_at))"))} AS group_key, sum(toInt64(sign)) AS c,
      sum(toInt64(sign) * total_audio_minutes_x1000) AS ax, sum(toInt64(sign) * total_video_minutes_x1000) AS vx,
      sum(toInt64(sign) * duration_seconds) AS ds, sum(toInt64(sign) * total_participants) AS ps
    FROM ${t.calls} WHERE ${and([...callConditions(t, f, pks), raw(`(${outside.join(" OR ")})`)])} GROUP BY group_key`;
}
