CREATE TABLE `analytics_call_day` (
	`app_pk` integer NOT NULL,
	`day` integer NOT NULL,
	`dims` integer NOT NULL,
	`pc` integer NOT NULL,
	`dur_bucket` integer NOT NULL,
	`calls` integer DEFAULT 0 NOT NULL,
	`audio` real DEFAULT 0 NOT NULL,
	`video` real DEFAULT 0 NOT NULL,
	`total_min` real DEFAULT 0 NOT NULL,
	`dur_s` integer DEFAULT 0 NOT NULL,
	`parts` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`app_pk`, `day`, `dims`, `pc`, `dur_bucket`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_call_q15` (
	`app_pk` integer NOT NULL,
	`bucket` integer NOT NULL,
	`dims` integer NOT NULL,
	`pc` integer NOT NULL,
	`calls` integer DEFAULT 0 NOT NULL,
	`audio` real DEFAULT 0 NOT NULL,
	`video` real DEFAULT 0 NOT NULL,
	`total_min` real DEFAULT 0 NOT NULL,
	`dur_s` integer DEFAULT 0 NOT NULL,
	`parts` integer DEFAULT 0 NOT NULL,
	`crossing` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`app_pk`, `bucket`, `dims`, `pc`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_numbers` (
	`n` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `analytics_participant_day` (
	`app_pk` integer NOT NULL,
	`uid` text NOT NULL,
	`dims` integer NOT NULL,
	`listed` integer DEFAULT 0 NOT NULL,
	`joined` integer DEFAULT 0 NOT NULL,
	`unanswered` integer DEFAULT 0 NOT NULL,
	`audio` real DEFAULT 0 NOT NULL,
	`video` real DEFAULT 0 NOT NULL,
	`total_min` real DEFAULT 0 NOT NULL,
	`first_start` integer,
	`last_start` integer,
	`day` integer NOT NULL,
	PRIMARY KEY(`app_pk`, `day`, `uid`, `dims`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `analytics_participant_month` (
	`app_pk` integer NOT NULL,
	`uid` text NOT NULL,
	`dims` integer NOT NULL,
	`listed` integer DEFAULT 0 NOT NULL,
	`joined` integer DEFAULT 0 NOT NULL,
	`unanswered` integer DEFAULT 0 NOT NULL,
	`audio` real DEFAULT 0 NOT NULL,
	`video` real DEFAULT 0 NOT NULL,
	`total_min` real DEFAULT 0 NOT NULL,
	`first_start` integer,
	`last_start` integer,
	`month` integer NOT NULL,
	PRIMARY KEY(`app_pk`, `month`, `uid`, `dims`)
) WITHOUT ROWID;
