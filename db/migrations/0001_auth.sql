CREATE TABLE `api_tokens` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_pk` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_ms` integer NOT NULL,
	`last_used_ms` integer,
	`revoked` integer DEFAULT false NOT NULL,
	`revoked_ms` integer,
	FOREIGN KEY (`user_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_user_idx` ON `api_tokens` (`user_pk`);--> statement-breakpoint
CREATE TABLE `audit_log` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at_ms` integer NOT NULL,
	`actor_user_pk` integer,
	`actor_email` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at_ms`);--> statement-breakpoint
CREATE TABLE `signin_failures` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `signin_failures_key_at_idx` ON `signin_failures` (`key`,`at_ms`);--> statement-breakpoint
CREATE INDEX `signin_failures_at_idx` ON `signin_failures` (`at_ms`);--> statement-breakpoint
CREATE TABLE `user_app_grants` (
	`user_pk` integer NOT NULL,
	`app_pk` integer NOT NULL,
	PRIMARY KEY(`user_pk`, `app_pk`),
	FOREIGN KEY (`user_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`app_pk`) REFERENCES `apps`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`role` text NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`session_epoch` integer DEFAULT 0 NOT NULL,
	`created_ms` integer NOT NULL,
	`updated_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);