/**
 * Which schema of the call facts ClickHouse mode writes (issue 25; docs/decisions/0034-clickhouse-schema-v2.md).
 *
 * Schema v2 (schema-v2.ts, written by writer-v2.ts) is always written. While the reports
 * still read schema v1's `calls` table, the writers keep writing it too: both, side by side
 * (the sync, and the copy from SQLite). When every ClickHouse read has moved to v2, set
 * this to false: the writers then write v2 alone, and the sync finds stored calls in v2's
 * `call_raw` instead of v1's `calls`. This is the only switch; nothing else reads v1 for
 * writing.
 */
export const WRITE_V1_FACTS = false;
