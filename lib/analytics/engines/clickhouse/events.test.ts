import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { openFixtureDb } from "@/lib/analytics/test-fixtures";
import { applyMigrations, eventCountRow, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { getEventCounts as fromSqlite } from "@/lib/ingest/queries";
import { getEventCounts } from "./reports/events";

process.env.AUTH_SECRET ??= "events-test-secret-at-least-32-characters";

/** The events report from ClickHouse's event_counts: SQLite's answer, in any zone. */
describe("ClickHouse events report (chdb)", () => {
  let db: Db;
  let ch: ClickHouse;
  const BASE = 1_772_928_000; // 2026-03-08T00:00Z: New York's DST starts that day

  beforeAll(async () => {
    db = openFixtureDb("ch-events");
    const ins = db.$client.prepare("INSERT INTO event_counts (app_pk, trigger, bucket_start, count) VALUES (?, ?, ?, ?)");
    for (let q = 0; q < 4 * 24 * 3; q++) for (const [app, trigger] of [[1, "message_sent"], [2, "group_created"], [3, "call_ended"]] as const) ins.run(app, trigger, BASE + 900 * q, 1 + ((q * 7 + app) % 5));
    ch = openChdb("events");
    await applyMigrations(ch, ch.placement);
    await copyToClickHouse(db, ch);
  });
  afterAll(async () => {
    await ch?.close();
    db?.$client.close();
  });

  it("sums the buckets per app, local day and trigger exactly as from SQLite", async () => {
    for (const tz of ["UTC", "America/New_York", "Asia/Kathmandu"]) {
      for (const appPks of [[1, 2, 3], [2]]) {
        const params = { from: BASE + 3 * 3600 + 60, to: BASE + 2 * 86_400 + 1234, tz };
        const expected = fromSqlite(db, appPks, params);
        expect(expected.length).toBeGreaterThan(0);
        expect(await getEventCounts(ch, db, appPks, params)).toEqual(expected);
      }
    }
  });

  it("counts a bucket forwarded again with a higher count once, at its newest count", async () => {
    db.$client.prepare("UPDATE event_counts SET count = 100 WHERE app_pk = 1 AND bucket_start = ?").run(BASE);
    await ch.insert("event_counts", [eventCountRow({ appPk: 1, trigger: "message_sent", bucketStart: BASE, count: 100 })]);
    await ch.insert("event_counts", [eventCountRow({ appPk: 1, trigger: "message_sent", bucketStart: BASE, count: 100 })]);
    const params = { from: BASE, to: BASE + 86_400 };
    expect(await getEventCounts(ch, db, [1], params)).toEqual(fromSqlite(db, [1], params));
    expect(() => fromSqlite(db, [1], { ...params, tz: "Mars/Olympus" })).toThrow(/time zone/);
    await expect(getEventCounts(ch, db, [1], { ...params, tz: "Mars/Olympus" })).rejects.toThrow(/time zone/);
  });
});
