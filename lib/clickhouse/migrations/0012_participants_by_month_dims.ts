import { createTableStatements, type MigrationStatement, type Placement } from "../schema";
import { PARTICIPANTS_BY_MONTH_DIMS, participantsDimsViewStatement } from "../schema-v2";
import { fillParticipantsByMonthDims } from "../participants-by-month-fill";

/**
 * participants_by_month_dims (schema-v2.ts): participants_by_month's sums per the call's
 * closed sets too, so that the participants, apps and engagement reports filtered on type,
 * mode, status or receiver type read whole months from a pre-aggregate instead of every
 * participant row (docs/decisions/0034, "Participants filtered by the call's dimensions
 * (session 18; migration 0012)"). The table and its view on every host (IF NOT EXISTS: a
 * killed run is run again), then every host sums its own months from its own participant
 * rows (participants-by-month-fill.ts, checkpointed per month, as 0010). Run `npm run
 * db:migrate` with the writers stopped, as for 0007, 0008 and 0010: a row inserted into a
 * month while that month is summed could be counted twice or not at all.
 */
export const migration0012 = {
  id: 12,
  name: "participants_by_month_dims",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => [
    ...createTableStatements(p, PARTICIPANTS_BY_MONTH_DIMS, onCluster),
    participantsDimsViewStatement(p, onCluster),
  ],
  fill: fillParticipantsByMonthDims,
};
