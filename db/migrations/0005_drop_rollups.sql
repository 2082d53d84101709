-- The trigger-kept rollups of 0003/0004 give way to the in-memory analytics store (docs/decisions/0006).
DROP TRIGGER IF EXISTS `analytics_calls_ai`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_calls_au`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_calls_au_participants`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_calls_bd`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_participants_ai`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_participants_ad`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `analytics_participants_au`;--> statement-breakpoint
DROP TABLE `analytics_call_day`;--> statement-breakpoint
DROP TABLE `analytics_call_q15`;--> statement-breakpoint
DROP TABLE `analytics_numbers`;--> statement-breakpoint
DROP TABLE `analytics_participant_day`;--> statement-breakpoint
DROP TABLE `analytics_participant_month`;
