/**
 * The write-path side of the analytics store: triggers that append the pk of every
 * changed call to `analytics_changes` (db/schema/analytics.ts). Migration
 * `0006_analytics_changes.sql` holds the first version (written once; 0009 changes two
 * triggers, 0020 drops the participant-insert one);
 * docs/decisions/0006-analytics-rollups.md says why a log and not rollups.
 *
 * Cost: one rowid append per changed call. A participant row written right after its
 * call's own entry (the sync's "upsert the call, replace its participants") appends
 * nothing: the newest entry already names the call. That is safe because readers
 * always re-read the call of the newest entry they saw (store.ts).
 *
 * A new call is not logged at all (migration 0009): pks are AUTOINCREMENT and writers
 * are serialised, so a reader finds every call inserted since it last looked as
 * `pk > ` the largest pk it holds; its participants, inserted in the same transaction,
 * come with it. Logging a backfill's million inserts cost the write path about a fifth
 * of its time (docs/decisions/0007).
 *
 * Participant inserts are not logged by a trigger either (migration 0020): any row
 * trigger on call_participants makes SQLite stage a multi-row INSERT in a temporary
 * table and run a trigger program per row, about 2 µs a call of the sync's write worker,
 * and for the sync's inserts it never logged anything. Whoever inserts participants of
 * a call it did not insert in the same transaction logs that call itself, with
 * LOG_CALL_CHANGE (lib/sync/writer.ts), as the sync's CallWriter does for the calls it
 * updates (docs/decisions/0025). Updates and deletes of participants keep their triggers.
 */

/** Entries kept; a reader further behind than this reloads in full. */
export const CHANGELOG_KEEP = 1 << 20;
/** The log is pruned every this many appends. */
export const CHANGELOG_PRUNE_EVERY = 4096;

/** Call columns the analytics store holds: an update touching none of them is not logged. */
const WATCHED = [
  "pk", "app_pk", "start_at", "ended_at", "type", "mode", "status", "receiver_type", "has_recording",
  "total_audio_minutes", "total_video_minutes", "duration_seconds", "total_participants",
];

const notNewest = (pk: string) => `(SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT ${pk}`;
const append = (pk: string) => `INSERT INTO analytics_changes (call_pk) VALUES (${pk});`;

/** The change-log triggers as they stand (0006, changed by 0009 and 0020). */
export function changelogTriggerStatements(): string[] {
  const changed = WATCHED.map((c) => `old.${c} IS NOT new.${c}`).join(" OR ");
  const participantChanged = ["call_pk", "uid", "state", "is_joined", "total_audio_minutes", "total_video_minutes", "total_duration_minutes"]
    .map((c) => `old.${c} IS NOT new.${c}`)
    .join(" OR ");
  return [
    `CREATE TRIGGER analytics_log_calls_au AFTER UPDATE ON calls FOR EACH ROW WHEN (${changed}) AND ${notNewest("new.pk")}
BEGIN ${append("new.pk")} END`,
    // A pk change (never done by Callboard) also empties the old slot.
    `CREATE TRIGGER analytics_log_calls_au_pk AFTER UPDATE OF pk ON calls FOR EACH ROW WHEN old.pk IS NOT new.pk
BEGIN ${append("old.pk")} END`,
    `CREATE TRIGGER analytics_log_calls_ad AFTER DELETE ON calls FOR EACH ROW WHEN ${notNewest("old.pk")}
BEGIN ${append("old.pk")} END`,
    `CREATE TRIGGER analytics_log_participants_ad AFTER DELETE ON call_participants FOR EACH ROW WHEN ${notNewest("old.call_pk")}
BEGIN ${append("old.call_pk")} END`,
    `CREATE TRIGGER analytics_log_participants_au AFTER UPDATE ON call_participants FOR EACH ROW WHEN ${participantChanged}
BEGIN ${append("old.call_pk")} ${append("new.call_pk")} END`,
    `CREATE TRIGGER analytics_log_prune AFTER INSERT ON analytics_changes FOR EACH ROW WHEN new.seq % ${CHANGELOG_PRUNE_EVERY} = 0
BEGIN DELETE FROM analytics_changes WHERE seq <= new.seq - ${CHANGELOG_KEEP}; END`,
  ];
}

/** Triggers of the retired rollup design (migration 0004), dropped by 0005. */
export const RETIRED_TRIGGERS = [
  "analytics_calls_ai", "analytics_calls_au", "analytics_calls_au_participants", "analytics_calls_bd",
  "analytics_participants_ai", "analytics_participants_ad", "analytics_participants_au",
];

export function changelogMigrationSql(): string {
  return changelogTriggerStatements().join("\n--> statement-breakpoint\n");
}
