/**
 * Saved views (issue 29): a named filter set of one report page. Each person keeps their
 * own; a shared one is offered to every user of the account (a viewer still sees only
 * the apps granted to them: a view names filters, not data). The owner or an admin
 * removes one. Creations and removals are audited.
 */
import { and, asc, eq, or } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { savedViews, users } from "@/db/schema";
import { HttpError, notFound } from "@/lib/http/errors";
import { carriedFilters } from "@/lib/ui/carry";
import { auditSync } from "./audit";
import type { Caller } from "./caller";

/** The report pages a view can be of (their filters are the shared ones). */
export const VIEW_PATHS = ["/", "/calls", "/participants", "/apps", "/recordings", "/live", "/events", "/sync"] as const;

export interface SavedView {
  id: number;
  name: string;
  path: (typeof VIEW_PATHS)[number];
  /** The filter query (`type=video&tz=Asia%2FKolkata`). */
  query: string;
  shared: boolean;
  owner: string;
  mine: boolean;
}

const viewInput = z
  .object({
    name: z.string().trim().min(1, "must not be empty").max(80, "at most 80 characters"),
    path: z.enum(VIEW_PATHS),
    query: z.string().max(4000),
    shared: z.boolean().optional(),
  })
  .strict();

/** The caller's own views, then the ones others shared, by name. */
export function listViews(db: Db, caller: Caller): SavedView[] {
  return db
    .select({ id: savedViews.pk, name: savedViews.name, path: savedViews.path, query: savedViews.query, shared: savedViews.shared, ownerPk: savedViews.ownerUserPk, owner: users.email })
    .from(savedViews)
    .innerJoin(users, eq(users.pk, savedViews.ownerUserPk))
    .where(or(eq(savedViews.ownerUserPk, caller.userId), eq(savedViews.shared, true)))
    .orderBy(asc(savedViews.name), asc(savedViews.pk))
    .all()
    .map(({ ownerPk, ...v }) => ({ ...v, path: v.path as SavedView["path"], mine: ownerPk === caller.userId }))
    .sort((a, b) => Number(b.mine) - Number(a.mine));
}

export function createView(db: Db, caller: Caller, body: unknown): SavedView {
  const parsed = viewInput.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "body");
    throw new HttpError(400, "invalid_parameter", `${field}: ${issue?.message ?? "invalid"}`, { parameter: field });
  }
  const v = parsed.data;
  // Only filter names are kept: a view never carries paging or anything else of a URL.
  const query = carriedFilters(new URLSearchParams(v.query.replace(/^\?/, ""))).toString();
  const row = db
    .insert(savedViews)
    .values({ ownerUserPk: caller.userId, name: v.name, path: v.path, query, shared: v.shared ?? false, createdMs: Date.now() })
    .returning({ id: savedViews.pk })
    .get();
  auditSync(db, caller, "view.create", v.name, { path: v.path, query, shared: v.shared ?? false });
  return { id: row.id, name: v.name, path: v.path, query, shared: v.shared ?? false, owner: caller.email, mine: true };
}

/** 404 for a view that does not exist or that the caller can neither see nor remove. */
export function removeView(db: Db, caller: Caller, id: number): void {
  const row = db.select().from(savedViews).where(eq(savedViews.pk, id)).get();
  const mayRemove = row !== undefined && (row.ownerUserPk === caller.userId || caller.role === "admin");
  if (!row || !mayRemove) throw notFound("no such view");
  db.delete(savedViews).where(and(eq(savedViews.pk, id))).run();
  auditSync(db, caller, "view.remove", row.name, { path: row.path });
}
