"use server";

import { revalidatePath } from "next/cache";
import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { parseId, runAction, type ActionState } from "@/lib/auth/route-support";
import { actionAdmin } from "@/lib/auth/session";
import { createApiToken, parseTokenExpiry, parseTokenScope, revokeApiToken } from "@/lib/auth/tokens";
import { resolveUser } from "@/lib/auth/users";

export async function createTokenAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const scope = parseTokenScope(String(form.get("scope") ?? "full"));
    const expiresMs = parseTokenExpiry(String(form.get("expires") ?? ""));
    const warehouse = db();
    const user = await resolveUser(warehouse, String(form.get("email") ?? ""));
    const name = String(form.get("name") ?? "").trim();
    const { token, view } = await createApiToken(warehouse, { userId: user.pk, name: name || undefined, scope, expiresMs });
    await audit(warehouse, caller, "token.create", `token ${view.id}`, { name: view.name, for: view.email, scope, expiresMs });
    revalidatePath("/settings/tokens");
    // The one time this token exists in clear: it goes to this admin's browser only.
    return { ok: `Token "${view.name}" created for ${view.email}. Copy it now: it will not be shown again.`, token };
  });
}

export async function revokeTokenAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const view = await revokeApiToken(warehouse, parseId(String(form.get("id") ?? "")));
    await audit(warehouse, caller, "token.revoke", `token ${view.id}`, { name: view.name, for: view.email });
    revalidatePath("/settings/tokens");
    return { ok: `Revoked "${view.name}".` };
  });
}
