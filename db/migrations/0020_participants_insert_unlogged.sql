-- A participant insert is no longer logged by a trigger: every row trigger makes SQLite run
-- a multi-row INSERT through a temporary table and a trigger program per row, about 2 µs of
-- the sync's 4.2 rows a call, and for the sync's own inserts the trigger never logged
-- anything (a new call's rows are found by pk; an updated call is logged by the writer).
-- Whoever inserts participants of a call it did not insert in the same transaction logs the
-- call itself (lib/analytics/engines/memory/store/changelog-sql.ts, LOG_CALL_CHANGE;
-- docs/decisions/0025). Deletes and updates of participants keep their triggers.
DROP TRIGGER IF EXISTS analytics_log_participants_ai;
