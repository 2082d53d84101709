CREATE TABLE `event_counts` (
	`app_pk` integer NOT NULL,
	`trigger` text NOT NULL,
	`bucket_start` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`app_pk`, `bucket_start`, `trigger`),
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `live_occupants` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_pk` integer NOT NULL,
	`name` text NOT NULL,
	`joined_at` integer NOT NULL,
	`left_at` integer,
	`audio_only` integer,
	FOREIGN KEY (`session_pk`) REFERENCES `live_sessions`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `live_occupants_session_stay_uq` ON `live_occupants` (`session_pk`,`name`,`joined_at`);--> statement-breakpoint
CREATE TABLE `live_sessions` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`session_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`initiator` text,
	`receiver` text,
	`receiver_type` text,
	`initiated_at` integer,
	`started_at` integer,
	`ended_at` integer,
	`last_event_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `live_sessions_app_session_uq` ON `live_sessions` (`app_pk`,`session_id`);--> statement-breakpoint
CREATE INDEX `live_sessions_app_status_idx` ON `live_sessions` (`app_pk`,`status`,`last_event_ms`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`idem_key` text NOT NULL,
	`trigger` text NOT NULL,
	`webhook` text NOT NULL,
	`type` text,
	`session_id` text,
	`outcome` text NOT NULL,
	`body` text NOT NULL,
	`received_ms` integer NOT NULL,
	`repeat_count` integer DEFAULT 0 NOT NULL,
	`last_received_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_app_key_uq` ON `webhook_deliveries` (`app_pk`,`idem_key`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_app_received_idx` ON `webhook_deliveries` (`app_pk`,`received_ms`);--> statement-breakpoint
CREATE TABLE `webhook_rejections` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`status` integer NOT NULL,
	`code` text NOT NULL,
	`reason` text NOT NULL,
	`trigger` text,
	`received_ms` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_rejections_app_received_idx` ON `webhook_rejections` (`app_pk`,`received_ms`);