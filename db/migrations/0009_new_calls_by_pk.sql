-- New calls are no longer written to the change log: readers find them by pk (AUTOINCREMENT,
-- serialised writers), and a new call's participants, inserted right after it on the same
-- connection, are skipped too (lib/analytics/changelog-sql.ts; docs/decisions/0007).
DROP TRIGGER IF EXISTS analytics_log_calls_ai;--> statement-breakpoint
DROP TRIGGER IF EXISTS analytics_log_participants_ai;--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_ai AFTER INSERT ON call_participants FOR EACH ROW WHEN new.call_pk IS NOT last_insert_rowid() AND (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT new.call_pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (new.call_pk); END
