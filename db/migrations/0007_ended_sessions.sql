CREATE TABLE `ended_sessions` (
	`sid` text PRIMARY KEY NOT NULL,
	`ended_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ended_sessions_ended_idx` ON `ended_sessions` (`ended_ms`);