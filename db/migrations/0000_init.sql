CREATE TABLE `apps` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` text NOT NULL,
	`name` text NOT NULL,
	`region` text NOT NULL,
	`api_key_enc` text NOT NULL,
	`api_key_last4` text NOT NULL,
	`calls_url` text,
	`on_behalf_of` text,
	`webhook_id` text,
	`webhook_name` text,
	`webhook_enabled` integer DEFAULT true NOT NULL,
	`webhook_use_basic_auth` integer DEFAULT false NOT NULL,
	`webhook_username` text,
	`webhook_password_enc` text,
	`backfill_completed_ms` integer,
	`last_full_sync_ms` integer,
	`last_successful_sync_ms` integer,
	`created_ms` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_ms` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_app_id_unique` ON `apps` (`app_id`);--> statement-breakpoint
CREATE TABLE `call_participants` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
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
	FOREIGN KEY (`call_pk`) REFERENCES `calls`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `call_participants_call_seq_uq` ON `call_participants` (`call_pk`,`seq`);--> statement-breakpoint
CREATE INDEX `call_participants_app_uid_idx` ON `call_participants` (`app_pk`,`uid`);--> statement-breakpoint
CREATE TABLE `calls` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`session_id` text NOT NULL,
	`mid` text,
	`type` text,
	`mode` text,
	`status` text,
	`initiator` text,
	`receiver` text,
	`receiver_type` text,
	`initiated_at` integer,
	`started_at` integer,
	`ended_at` integer,
	`start_at` integer NOT NULL,
	`platform_has_recording` integer DEFAULT false NOT NULL,
	`has_recording` integer DEFAULT false NOT NULL,
	`total_audio_minutes` real DEFAULT 0 NOT NULL,
	`total_video_minutes` real DEFAULT 0 NOT NULL,
	`total_duration_minutes` real DEFAULT 0 NOT NULL,
	`duration_seconds` integer DEFAULT 0 NOT NULL,
	`total_participants` integer DEFAULT 0 NOT NULL,
	`source` text DEFAULT 'sync' NOT NULL,
	`content_hash` text,
	`raw` text,
	`first_seen_ms` integer NOT NULL,
	`updated_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `calls_app_session_uq` ON `calls` (`app_pk`,`session_id`);--> statement-breakpoint
CREATE INDEX `calls_app_start_idx` ON `calls` (`app_pk`,`start_at`);--> statement-breakpoint
CREATE INDEX `calls_app_status_idx` ON `calls` (`app_pk`,`status`);--> statement-breakpoint
CREATE TABLE `recordings` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`session_id` text NOT NULL,
	`recording_url` text NOT NULL,
	`recording_date` text,
	`duration` real,
	`start_time` integer,
	`received_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `recordings_app_session_start_uq` ON `recordings` (`app_pk`,`session_id`,`start_time`);--> statement-breakpoint
CREATE INDEX `recordings_app_received_idx` ON `recordings` (`app_pk`,`received_ms`);--> statement-breakpoint
CREATE TABLE `sync_locks` (
	`app_pk` integer PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`acquired_ms` integer NOT NULL,
	`expires_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`kind` text NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`started_ms` integer NOT NULL,
	`finished_ms` integer,
	`pages` integer DEFAULT 0 NOT NULL,
	`fetched` integer DEFAULT 0 NOT NULL,
	`inserted` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`unchanged` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`refreshed` integer DEFAULT 0 NOT NULL,
	`error` text,
	`skipped_records` text,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sync_runs_app_started_idx` ON `sync_runs` (`app_pk`,`started_ms`);