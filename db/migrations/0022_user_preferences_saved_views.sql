CREATE TABLE `saved_views` (
	`pk` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner_user_pk` integer NOT NULL,
	`name` text NOT NULL,
	`path` text NOT NULL,
	`query` text NOT NULL,
	`shared` integer DEFAULT false NOT NULL,
	`created_ms` integer NOT NULL,
	FOREIGN KEY (`owner_user_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `saved_views_owner_idx` ON `saved_views` (`owner_user_pk`);--> statement-breakpoint
CREATE INDEX `saved_views_shared_idx` ON `saved_views` (`shared`);--> statement-breakpoint
CREATE TABLE `user_preferences` (
	`user_pk` integer PRIMARY KEY NOT NULL,
	`time_zone` text,
	`apps` text DEFAULT '[]' NOT NULL,
	`updated_ms` integer NOT NULL,
	FOREIGN KEY (`user_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE cascade
);
