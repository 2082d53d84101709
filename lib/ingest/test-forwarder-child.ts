/**
 * Test fixture: a separate process that forwards a warehouse's deliveries to ClickHouse
 * in small batches, slowly, printing each batch, so that a test can SIGKILL it mid-way.
 * Env: DB_FILE, CLICKHOUSE_URL (and CLICKHOUSE_CLUSTER), BATCH_ROWS, DELAY_MS.
 */
import { openDatabase } from "@/db/client";
import { clickhouse } from "@/lib/clickhouse/client";
import { clickHouseForwardTarget } from "./clickhouse-target";
import { Forwarder, type ForwardTarget } from "./forwarder";

const db = openDatabase(process.env.DB_FILE ?? "");
const delay = Number(process.env.DELAY_MS ?? 50);
const inner = clickHouseForwardTarget(clickhouse());
let batches = 0;
// Each write lands in ClickHouse, then the fixture waits before the cursor moves: a kill
// in that window leaves rows in ClickHouse that the next forwarder sends again.
const written = async () => {
  process.stdout.write(`batch ${++batches}\n`);
  await new Promise((r) => setTimeout(r, delay));
};
const target: ForwardTarget = {
  writeDeliveries: async (rows) => (await inner.writeDeliveries(rows), written()),
  writeEventCounts: async (rows) => (await inner.writeEventCounts(rows), written()),
  writeRecordings: async (rows) => (await inner.writeRecordings(rows), written()),
  writeClientSessions: async (rows) => (await inner.writeClientSessions(rows), written()),
};
await new Forwarder(db, target, { batchRows: Number(process.env.BATCH_ROWS ?? 20) }).drain();
process.stdout.write("done\n");
