import { CLIENT_SESSIONS, createTableStatements, type Placement } from "../schema";

/** Clients and platforms per participant session (schema.ts CLIENT_SESSIONS; docs/decisions/0017-client-sessions.md). */
export const migration0003 = {
  id: 3,
  name: "client_sessions",
  statements: (p: Placement, onCluster: boolean): string[] => createTableStatements(p, CLIENT_SESSIONS, onCluster),
};
