-- Participants become one B-tree keyed (call_pk, seq), WITHOUT ROWID (drizzle cannot declare
-- it, so this line is edited by hand); the (app_pk, uid) index goes: reports read the in-memory
-- analytics store, and the uid filter probes a call's rows by key (docs/decisions/0007).
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_call_participants` (
	`call_pk` integer NOT NULL,
	`app_pk` integer NOT NULL,
	`seq` integer NOT NULL,
	`uid` text NOT NULL,
	`state` text,
	`is_joined` integer DEFAULT false NOT NULL,
	`total_audio_minutes` real DEFAULT 0 NOT NULL,
	`total_video_minutes` real DEFAULT 0 NOT NULL,
	`total_duration_minutes` real DEFAULT 0 NOT NULL,
	`device_id` text,
	`joined_at` integer,
	`left_at` integer,
	`mid` text,
	`raw` text,
	PRIMARY KEY(`call_pk`, `seq`),
	FOREIGN KEY (`call_pk`) REFERENCES `calls`(`pk`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_call_participants`("call_pk", "app_pk", "seq", "uid", "state", "is_joined", "total_audio_minutes", "total_video_minutes", "total_duration_minutes", "device_id", "joined_at", "left_at", "mid", "raw") SELECT "call_pk", "app_pk", "seq", "uid", "state", "is_joined", "total_audio_minutes", "total_video_minutes", "total_duration_minutes", "device_id", "joined_at", "left_at", "mid", "raw" FROM `call_participants` ORDER BY "call_pk", "seq";--> statement-breakpoint
DROP TABLE `call_participants`;--> statement-breakpoint
ALTER TABLE `__new_call_participants` RENAME TO `call_participants`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
-- Dropping the old table dropped its change-log triggers: the same three, from 0006.
CREATE TRIGGER analytics_log_participants_ai AFTER INSERT ON call_participants FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT new.call_pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (new.call_pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_ad AFTER DELETE ON call_participants FOR EACH ROW WHEN (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT old.call_pk
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.call_pk); END
--> statement-breakpoint
CREATE TRIGGER analytics_log_participants_au AFTER UPDATE ON call_participants FOR EACH ROW WHEN old.call_pk IS NOT new.call_pk OR old.uid IS NOT new.uid OR old.state IS NOT new.state OR old.is_joined IS NOT new.is_joined OR old.total_audio_minutes IS NOT new.total_audio_minutes OR old.total_video_minutes IS NOT new.total_video_minutes OR old.total_duration_minutes IS NOT new.total_duration_minutes
BEGIN INSERT INTO analytics_changes (call_pk) VALUES (old.call_pk); INSERT INTO analytics_changes (call_pk) VALUES (new.call_pk); END
--> statement-breakpoint
-- Sort and time indexes of 0004 and 0000: reports sort and filter in the analytics store.
DROP INDEX IF EXISTS `calls_start_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `calls_duration_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `calls_participants_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `calls_minutes_idx`;--> statement-breakpoint
DROP INDEX `calls_app_start_idx`;--> statement-breakpoint
DROP INDEX `calls_app_status_idx`;--> statement-breakpoint
CREATE INDEX `calls_app_ongoing_idx` ON `calls` (`app_pk`) WHERE status = 'ongoing';