import { addColumnStatements, type MigrationStatement, type Placement } from "../schema";
import { PARTICIPANT_CALL_COLUMNS, PARTICIPANTS_V2 } from "../schema-v2";
import { fillParticipantCallColumns } from "../participants-fill";

/**
 * participants_v2's PARTICIPANT_CALL_COLUMNS (schema-v2.ts): the first joined / unanswered
 * row of each uid in its call, and the call's filter dimensions, so that the participants
 * reports read signed sums of participant rows alone (docs/decisions/0034, "Participants as
 * signed sums"). The columns are added where they are missing; then every host's rows
 * written before them are filled (participants-fill.ts: month by month, checkpointed,
 * resumable; nothing to do on a new warehouse).
 */
export const migration0008 = {
  id: 8,
  name: "participant_call_columns",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] =>
    PARTICIPANT_CALL_COLUMNS.flatMap(([name]) => addColumnStatements(p, PARTICIPANTS_V2, name, onCluster)),
  fill: fillParticipantCallColumns,
};
