CREATE TABLE `analytics_changes` (
	`seq` integer PRIMARY KEY NOT NULL,
	`call_pk` integer NOT NULL
);
--> statement-breakpoint
-- Generated from lib/analytics/changelog-sql.ts (changelogMigrationSql). Do not edit by hand.
CREATE TRIGGER analytics_log_calls_ai AFTER INSERT ON calls FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT new.pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (new.pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_calls_au AFTER UPDATE ON calls FOR EACH ROW WHEN (old.pk IS NOT new.pk OR old.app_pk IS NOT new.app_pk OR old.start_at IS NOT new.start_at OR old.ended_at IS NOT new.ended_at OR old.type IS NOT new.type OR old.mode IS NOT new.mode OR old.status IS NOT new.status OR old.receiver_type IS NOT new.receiver_type OR old.has_recording IS NOT new.has_recording OR old.total_audio_minutes IS NOT new.total_audio_minutes OR old.total_video_minutes IS NOT new.total_video_minutes OR old.duration_seconds IS NOT new.duration_seconds OR old.total_participants IS NOT new.total_participants) AND (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT new.pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (new.pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_calls_au_pk AFTER UPDATE OF pk ON calls FOR EACH ROW WHEN old.pk IS NOT new.pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_calls_ad AFTER DELETE ON calls FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT old.pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_ai AFTER INSERT ON call_participants FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT new.call_pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (new.call_pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_ad AFTER DELETE ON call_participants FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT old.call_pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.call_pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_au AFTER UPDATE ON call_participants FOR EACH ROW WHEN old.call_pk IS NOT new.call_pk OR old.uid IS NOT new.uid OR old.state IS NOT new.state OR old.is_joined IS NOT new.is_joined OR old.total_audio_minutes IS NOT new.total_audio_minutes OR old.total_video_minutes IS NOT new.total_video_minutes OR old.total_duration_minutes IS NOT new.total_duration_minutes
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.call_pk); INSERT INTO analytics_changes (call_pk) VALUES (new.call_pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_prune AFTER INSERT ON analytics_changes FOR EACH ROW WHEN new.seq % 4096 = 0
BEGIN DELETE FROM analytics_changes WHERE seq <= new.seq - 1048576; END
