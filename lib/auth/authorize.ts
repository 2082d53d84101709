/**
 * THE authorization point. Every page, route handler and server action asks it who
 * the caller is and which apps they may see. (Filled in by the sign-in work: sessions
 * via next-auth, `Authorization: Bearer <token>` for scripts.)
 *
 * Until then nothing is allowed: no route may ship open.
 */
import { unauthorized } from "@/lib/http/errors";

export interface Caller {
  userId: number;
  email: string;
  role: "admin" | "viewer";
  /** `all` for admins; the granted app pks for viewers. */
  appPks: "all" | number[];
}

export async function authorize(_request: Request): Promise<Caller> {
  void _request;
  throw unauthorized();
}
