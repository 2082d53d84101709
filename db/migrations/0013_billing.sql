CREATE TABLE `price_sheets` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_pk` integer,
	`effective_month` text NOT NULL,
	`currency` text NOT NULL,
	`audio_per_minute` text NOT NULL,
	`video_per_minute` text NOT NULL,
	`per_recording` text NOT NULL,
	`included_minutes` text DEFAULT '0' NOT NULL,
	`monthly_minimum` text DEFAULT '0' NOT NULL,
	`updated_ms` integer NOT NULL,
	`updated_by` text NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `price_sheets_scope_month_uq` ON `price_sheets` (coalesce("app_pk", 0),`effective_month`);
--> statement-breakpoint
CREATE TABLE `statements` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`number` integer NOT NULL,
	`app_pk` integer,
	`app_id` text NOT NULL,
	`app_name` text NOT NULL,
	`month` text NOT NULL,
	`time_zone` text NOT NULL,
	`currency` text NOT NULL,
	`total` text NOT NULL,
	`body` text NOT NULL,
	`issued_ms` integer NOT NULL,
	`issued_by_user_pk` integer,
	`issued_by` text NOT NULL,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statements_number_unique` ON `statements` (`number`);
--> statement-breakpoint
CREATE UNIQUE INDEX `statements_app_month_uq` ON `statements` (`app_id`,`month`);
--> statement-breakpoint
CREATE TABLE `statement_adjustments` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`statement_pk` integer NOT NULL,
	`adjusts_pk` integer NOT NULL,
	`amount` text NOT NULL,
	`details` text,
	FOREIGN KEY (`statement_pk`) REFERENCES `statements`(`pk`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`adjusts_pk`) REFERENCES `statements`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `statement_adjustments_adjusts_idx` ON `statement_adjustments` (`adjusts_pk`);
--> statement-breakpoint
CREATE INDEX `statement_adjustments_statement_idx` ON `statement_adjustments` (`statement_pk`);
