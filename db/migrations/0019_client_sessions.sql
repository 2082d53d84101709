-- Clients and platforms per participant session, kept at ingest (lib/ingest/client-sessions.ts;
-- docs/decisions/0017-client-sessions.md). Never pruned with the raw deliveries.
CREATE TABLE `client_sessions` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer NOT NULL,
	`session_id` text NOT NULL,
	`occupant` text NOT NULL,
	`joined_at` integer,
	`counted_at` integer NOT NULL,
	`left_at` integer,
	`trigger` text NOT NULL,
	`platform` text,
	`sdk` text,
	`call_version` text,
	`is_audio_only` integer,
	`audio_call` integer,
	`is_video_muted` integer,
	`start_recording_on_call_start` integer,
	`received_ms` integer NOT NULL,
	`seq` integer NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `client_sessions_stay_uq` ON `client_sessions` (`app_pk`,`session_id`,`occupant`,ifnull(`joined_at`, -1));
--> statement-breakpoint
CREATE INDEX `client_sessions_app_counted_idx` ON `client_sessions` (`app_pk`,`counted_at`);
--> statement-breakpoint
CREATE UNIQUE INDEX `client_sessions_seq_uq` ON `client_sessions` (`seq`);
--> statement-breakpoint
-- One-off fills of new tables from what was stored before them, run at start after the
-- migrations (db/backfills.ts): the deliveries with pk in (after_pk, upto_pk] are still to read.
CREATE TABLE `warehouse_backfills` (
	`name` text PRIMARY KEY NOT NULL,
	`after_pk` integer DEFAULT 0 NOT NULL,
	`upto_pk` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `warehouse_backfills` (`name`, `after_pk`, `upto_pk`) SELECT 'client_sessions', 0, coalesce(max(`pk`), 0) FROM `webhook_deliveries`;
