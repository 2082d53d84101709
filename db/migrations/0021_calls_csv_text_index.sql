-- The calls CSV reads, by pk, the seven columns the in-memory analytics store does not hold
-- (lib/analytics/engines/memory/reports/calls-csv-reader.ts). From the table, each row read
-- touches the page of a ~1.3-6.5 KB row (the raw record is stored inline); this index holds
-- just those columns, ~85 bytes a call, ~150 calls a 16 KB page (docs/decisions/0028).
CREATE INDEX IF NOT EXISTS `calls_csv_text_idx` ON `calls` (`pk`,`session_id`,`initiator`,`receiver`,`initiated_at`,`started_at`,`ended_at`,`total_duration_minutes`);
