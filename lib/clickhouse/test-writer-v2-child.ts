/**
 * Test fixture (writer-v2.integration.test.ts): a process that writes one batch of v2
 * changes and SIGKILLs itself when the writer reaches KILL_STEP (on any shard), so that a
 * test sees what a writer dying between two of its inserts leaves behind.
 * Env: CLICKHOUSE_URL, CLICKHOUSE_CLUSTER, APP_PK, CHANGES (JSON CallChangeV2[]), KILL_STEP;
 * or FLAG_SESSIONS (JSON session ids) instead of CHANGES: the link-flag pass over those calls
 * (link-flags.ts, what the forwarder runs), killed the same way (link-flags.integration.test.ts).
 */
import { openClickHouse } from "./client";
import { parseClickHouseConfig } from "./config";
import { flagLinkedCalls } from "./link-flags";
import { CallWriterV2, openShardsV2, type CallChangeV2 } from "./writer-v2";

const config = parseClickHouseConfig(process.env.CLICKHOUSE_URL ?? "", process.env.CLICKHOUSE_CLUSTER || undefined);
const ch = openClickHouse(config);
const shards = await openShardsV2(ch, config);
const killAt = process.env.KILL_STEP;
const writer = new CallWriterV2(ch, shards, {
  onStep: (step) => {
    if (step === killAt) process.kill(process.pid, "SIGKILL");
  },
});
if (process.env.FLAG_SESSIONS) await flagLinkedCalls(writer, ch, Number(process.env.APP_PK), JSON.parse(process.env.FLAG_SESSIONS) as string[]);
else await writer.write(Number(process.env.APP_PK), JSON.parse(process.env.CHANGES ?? "[]") as CallChangeV2[]);
process.stdout.write("finished\n");
process.exit(0);
