-- Token scopes and expiry (issue 27): tokens made before keep their full rights and never expire.
ALTER TABLE `api_tokens` ADD `scope` text DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `expires_ms` integer;