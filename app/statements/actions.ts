"use server";

import { db } from "@/db";
import { runAction, type ActionState } from "@/lib/auth/route-support";
import { actionAdmin } from "@/lib/auth/session";
import { issueStatement } from "@/lib/billing/issue";

export async function issueStatementAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const field = (name: string) => String(form.get(name) ?? "");
    const issued = await issueStatement(db(), caller, { month: field("month"), tz: field("tz"), app: field("app"), carry: form.get("carry") === "on" });
    return { ok: `Issued ${issued.issued!.number} for ${issued.name}, ${issued.month}: ${issued.currency} ${issued.total}.` };
  });
}
