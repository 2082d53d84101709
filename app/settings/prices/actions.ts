"use server";

import { revalidatePath } from "next/cache";
import { db } from "@/db";
import { runAction, type ActionState } from "@/lib/auth/route-support";
import { actionAdmin } from "@/lib/auth/session";
import { removePriceSheet, setPriceSheet } from "@/lib/billing/price-sheets";

/** The app select's value for the account default. */
const DEFAULT_SCOPE = "__default__";

const field = (form: FormData, name: string) => String(form.get(name) ?? "");
const scopeOf = (form: FormData) => (field(form, "app") === DEFAULT_SCOPE ? null : field(form, "app"));

export async function setPriceSheetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const sheet = await setPriceSheet(db(), caller, {
      app: scopeOf(form), effectiveMonth: field(form, "effectiveMonth"), currency: field(form, "currency"), audioPerMinute: field(form, "audioPerMinute"),
      videoPerMinute: field(form, "videoPerMinute"), perRecording: field(form, "perRecording"), includedMinutes: field(form, "includedMinutes"),
      monthlyMinimum: field(form, "monthlyMinimum"),
    });
    revalidatePath("/settings/prices");
    return { ok: `Prices of ${sheet.appName ?? "the account default"} set from ${sheet.effectiveMonth}.` };
  });
}

export async function removePriceSheetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return runAction(async () => {
    const caller = await actionAdmin();
    const app = scopeOf(form);
    await removePriceSheet(db(), caller, { app, effectiveMonth: field(form, "effectiveMonth") });
    revalidatePath("/settings/prices");
    return { ok: `Removed the sheet of ${app ?? "the account default"} from ${field(form, "effectiveMonth")}.` };
  });
}
