"use server";

import { revalidatePath } from "next/cache";
import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { parseId, runAction, type ActionState } from "@/lib/auth/route-support";
import { actionAdmin } from "@/lib/auth/session";
import { createUser, removeUser, updateUser, type Role } from "@/lib/auth/users";
import { badRequest } from "@/lib/http/errors";

// Every action asks the authorization point itself: a server action is a public
// endpoint whether or not a form shows it.

const text = (f: FormData, k: string) => String(f.get(k) ?? "").trim();
const appsOf = (f: FormData) => f.getAll("apps").map(String).filter(Boolean);
const roleOf = (f: FormData): Role => {
  const role = text(f, "role");
  if (role !== "admin" && role !== "viewer") throw badRequest("role must be admin or viewer");
  return role;
};

export async function createUserAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const user = await createUser(warehouse, { email: text(form, "email"), password: String(form.get("password") ?? ""), role: roleOf(form), apps: appsOf(form) });
    await audit(warehouse, caller, "user.create", user.email, { role: user.role, apps: user.apps });
    revalidatePath("/settings/users");
    return { ok: `Added ${user.email}.` };
  });
}

export async function updateUserAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const id = parseId(text(form, "id"));
    const password = String(form.get("password") ?? "");
    const user = await updateUser(warehouse, id, {
      role: roleOf(form),
      apps: appsOf(form),
      disabled: form.get("disabled") === "on",
      ...(password ? { password } : {}),
    });
    await audit(warehouse, caller, "user.update", user.email, { role: user.role, apps: user.apps, disabled: user.disabled, passwordChanged: Boolean(password) });
    revalidatePath("/settings/users");
    return { ok: `Saved ${user.email}.` };
  });
}

export async function removeUserAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const warehouse = db();
    const id = parseId(text(form, "id"));
    if (id === caller.userId) throw badRequest("You cannot remove yourself; ask another admin.");
    const user = await removeUser(warehouse, id);
    await audit(warehouse, caller, "user.remove", user.email);
    revalidatePath("/settings/users");
    return { ok: `Removed ${user.email}.` };
  });
}
