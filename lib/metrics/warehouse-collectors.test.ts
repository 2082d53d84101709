import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";
import { parseMetrics, sampleValue } from "@/lib/testing/prometheus-text";
import { metrics } from "./registry";
import { registerWarehouseCollectors } from "./warehouse-collectors";

/** ClickHouse mode's backlog gauges, read from the SQLite side alone (no ClickHouse needed to count what waits for it). */
describe("the ClickHouse forward backlog on /metrics", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-collectors-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts the deliveries stored locally and not yet forwarded, with the oldest one's age", async () => {
    process.env.AUTH_SECRET = "collectors-suite-secret-0123456789abcdef";
    process.env.CLICKHOUSE_URL = "http://default:pw@127.0.0.1:9/callboard";
    resetEnvForTests();
    const db = openDatabase(path.join(dir, "warehouse.db"));
    try {
      await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" });
      const now = Date.now();
      const insert = db.$client.prepare(
        "INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, outcome, body, received_ms, last_received_ms) VALUES ((SELECT pk FROM apps WHERE app_id = 'acme'), ?, 'message_sent', 'wh', 'applied', '{}', ?, ?)",
      );
      for (let i = 0; i < 3; i++) insert.run(`k-${i}`, now - (600 - i) * 1000, now);
      registerWarehouseCollectors(() => db, { syncMaxAgeSeconds: 0 });
      const samples = parseMetrics(await metrics().registry.metrics());
      expect(sampleValue(samples, "callboard_clickhouse_forward_backlog")).toBe(3);
      expect(sampleValue(samples, "callboard_clickhouse_forward_oldest_age_seconds")).toBeGreaterThanOrEqual(600);
    } finally {
      db.$client.close();
      delete process.env.CLICKHOUSE_URL;
      resetEnvForTests();
    }
  });
});
