/**
 * Issuing freezes a month's statement of one app: its lines, totals, usage, price terms
 * and participant detail are stored as shown, with a gapless number, the date and who
 * issued it. The pending adjustments it carries are recorded against the statements
 * they correct. The issue and each carried adjustment are audited in the same
 * transaction.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { statementAdjustments, statements } from "@/db/schema";
import { auditSync } from "@/lib/auth/audit";
import type { Caller } from "@/lib/auth/authorize";
import { HttpError } from "@/lib/http/errors";
import { carriedSoFar, issuedBefore, statementNumber, type IssuedBody } from "./issued";
import { sumMoney } from "./money";
import { buildStatements, type Statement } from "./statements";

export interface IssueRequest {
  month: string;
  tz: string;
  app: string;
  /** Carry the pending adjustments of earlier issued months (default true). */
  carry?: boolean;
}

const conflict = (message: string) => new HttpError(409, "conflict", message);

export async function issueStatement(db: Db, caller: Caller, req: IssueRequest, now = Math.floor(Date.now() / 1000)): Promise<Statement> {
  if (caller.role !== "admin") throw new HttpError(403, "forbidden", "Only an admin can issue a statement.");
  // What earlier statements had carried when the draft was priced: if that changes before
  // the transaction, another issue carried an adjustment meanwhile and this draft is stale.
  const earlier = issuedBefore(db, [req.app], req.month);
  const carriedThen = carriedSoFar(db, earlier.map((s) => s.pk));
  const { statements: [draft] } = await buildStatements(db, { month: req.month, tz: req.tz, apps: [req.app], detail: true }, caller, now);
  if (draft.status === "issued") throw conflict(`the statement of ${req.month} for ${req.app} is already issued (${draft.issued!.number})`);
  if (draft.status === "unpriced" || !draft.terms || !draft.currency) throw conflict(`no price sheet is in force for ${req.app} in ${req.month}: set one first (Settings → Price sheets)`);
  if (!draft.monthOver) throw conflict(`${req.month} has not ended yet in ${req.tz}: a month is issued once it is over`);
  const carry = req.carry ?? true;
  const lines = carry ? draft.lines : draft.lines.filter((l) => l.kind !== "adjustment");
  const carried = carry ? draft.lines.filter((l) => l.kind === "adjustment") : [];
  const adjustmentsAmount = carry ? draft.adjustmentsAmount! : sumMoney([], draft.currency);
  const total = carry ? draft.total! : sumMoney([draft.usageAmount!, draft.minimumTopUp!], draft.currency);
  const body: IssuedBody = {
    from: draft.from, to: draft.to, usage: draft.usage, terms: draft.terms, lines, usageAmount: draft.usageAmount!, minimumTopUp: draft.minimumTopUp!,
    adjustmentsAmount, total, participants: draft.participants ?? [],
  };
  const number = db.transaction(() => {
    if (db.select({ pk: statements.pk }).from(statements).where(sql`${statements.appId} = ${req.app} AND ${statements.month} = ${req.month}`).get()) {
      throw conflict(`the statement of ${req.month} for ${req.app} was just issued by someone else`);
    }
    const next = (db.select({ n: sql<number>`coalesce(max(${statements.number}), 0) + 1` }).from(statements).get()?.n ?? 1) as number;
    const appPk = db.$client.prepare("SELECT pk FROM apps WHERE app_id = ?").pluck().get(req.app) as number | undefined;
    const row = db
      .insert(statements)
      .values({
        number: next, appPk: appPk ?? null, appId: draft.app, appName: draft.name, month: req.month, timeZone: draft.timeZone, currency: draft.currency!,
        total, body: body as unknown as Record<string, unknown>, issuedMs: Date.now(), issuedByUserPk: caller.userId, issuedBy: caller.email,
      })
      .returning({ pk: statements.pk })
      .get();
    const target = `${draft.app} ${req.month}`;
    auditSync(db, caller, "statement.issue", target, { number: statementNumber(next), timeZone: draft.timeZone, currency: draft.currency, total, carried: carried.length });
    const carriedNow = carriedSoFar(db, earlier.map((s) => s.pk));
    if (JSON.stringify([...carriedNow]) !== JSON.stringify([...carriedThen])) {
      throw conflict("another statement carried an adjustment of this app meanwhile: issue again");
    }
    for (const line of carried) {
      const adjusted = earlier.find((s) => s.number === line.adjusts!.number)!;
      db.insert(statementAdjustments).values({ statementPk: row.pk, adjustsPk: adjusted.pk, amount: line.amount, details: { month: adjusted.month, usage: line.adjusts!.usage } }).run();
      auditSync(db, caller, "statement.adjustment", target, { number: statementNumber(next), adjusts: line.adjusts!.number, month: line.adjusts!.month, amount: line.amount, currency: draft.currency });
    }
    return next;
  });
  const { statements: [issued] } = await buildStatements(db, { month: req.month, tz: req.tz, apps: [req.app], detail: false }, caller, now);
  if (issued.issued?.number !== statementNumber(number)) throw new Error("issued statement not found after issue");
  return issued;
}
