CREATE TABLE `alert_rules` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`metric` text NOT NULL,
	`filters` text NOT NULL,
	`window_seconds` integer NOT NULL,
	`condition` text NOT NULL,
	`min_calls` integer DEFAULT 0 NOT NULL,
	`destination_url_enc` text,
	`destination_secret_enc` text,
	`destination_allow_private` integer DEFAULT false NOT NULL,
	`state` text DEFAULT 'ok' NOT NULL,
	`state_since_ms` integer NOT NULL,
	`last_window_to` integer,
	`last_evaluated_ms` integer,
	`last_value` real,
	`last_previous_value` real,
	`last_calls` integer,
	`last_note` text,
	`version` integer DEFAULT 1 NOT NULL,
	`created_by_pk` integer,
	`created_ms` integer NOT NULL,
	`updated_ms` integer NOT NULL,
	FOREIGN KEY (`created_by_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `alert_events` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`rule_pk` integer NOT NULL,
	`event_id` text NOT NULL,
	`from_state` text NOT NULL,
	`to_state` text NOT NULL,
	`at_ms` integer NOT NULL,
	`window_from` integer NOT NULL,
	`window_to` integer NOT NULL,
	`value` real NOT NULL,
	`previous_value` real,
	`threshold` real NOT NULL,
	`calls` integer NOT NULL,
	FOREIGN KEY (`rule_pk`) REFERENCES `alert_rules`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_events_event_id_uq` ON `alert_events` (`event_id`);--> statement-breakpoint
CREATE INDEX `alert_events_rule_idx` ON `alert_events` (`rule_pk`,`pk`);--> statement-breakpoint
CREATE TABLE `alert_outbox` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`rule_pk` integer NOT NULL,
	`event_id` text NOT NULL,
	`body` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_ms` integer NOT NULL,
	`next_attempt_ms` integer NOT NULL,
	`last_attempt_ms` integer,
	`last_status` integer,
	`last_error` text,
	`delivered_ms` integer,
	FOREIGN KEY (`rule_pk`) REFERENCES `alert_rules`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_outbox_event_id_uq` ON `alert_outbox` (`event_id`);--> statement-breakpoint
CREATE INDEX `alert_outbox_due_idx` ON `alert_outbox` (`status`,`next_attempt_ms`);
