-- A call's event log on its page (every webhook delivery of one session, in order):
-- found by app and session without reading the app's whole delivery history.
-- Partial: chat deliveries carry no session and cost nothing here.
CREATE INDEX `webhook_deliveries_app_session_idx` ON `webhook_deliveries` (`app_pk`,`session_id`) WHERE session_id IS NOT NULL;
