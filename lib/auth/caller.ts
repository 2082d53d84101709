/**
 * Who is asking, as every page, route and audit entry sees it (authorize.ts finds out).
 * Its own module, so that what only records a caller (audit.ts) does not import the
 * authorization point, which imports the first-admin bootstrap, which audits.
 */
export interface Caller {
  userId: number;
  email: string;
  role: "admin" | "viewer";
  /** `all` for admins; the granted app pks for viewers. */
  appPks: "all" | number[];
  /** Set when the caller is a read-scoped API token: no writes, no admin operations, whatever its user's role. */
  readOnly?: true;
}
