CREATE TABLE `user_preferences` (
	`user_pk` integer PRIMARY KEY NOT NULL,
	`time_zone` text,
	`apps` text DEFAULT '[]' NOT NULL,
	`updated_ms` integer NOT NULL,
	FOREIGN KEY (`user_pk`) REFERENCES `users`(`pk`) ON UPDATE no action ON DELETE cascade
);
