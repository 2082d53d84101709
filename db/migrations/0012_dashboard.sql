-- Calls the platform flags as recorded: the recordings summary and "awaiting their link"
-- (lib/analytics/recording-status.ts) count and list them without reading every call.
-- Partial, so calls without the flag cost nothing; session_id makes the count covering.
CREATE INDEX `calls_platform_recording_idx` ON `calls` (`app_pk`,`start_at`,`session_id`) WHERE platform_has_recording = 1;
