CREATE TABLE `clickhouse_forwarding` (
	`stream` text PRIMARY KEY NOT NULL,
	`last_pk` integer DEFAULT 0 NOT NULL,
	`forwarded` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_attempt_ms` integer,
	`last_success_ms` integer,
	`next_attempt_ms` integer
);
