import { COPY_CHECKPOINTS, createTableStatements, type Placement } from "../schema";

/** The copy command's checkpoints (copy.ts). */
export const migration0002 = {
  id: 2,
  name: "copy_checkpoints",
  statements: (p: Placement, onCluster: boolean): string[] => createTableStatements(p, COPY_CHECKPOINTS, onCluster),
};
