/**
 * `npm run users -- add|update|list|remove …`: people who sign in to Callboard.
 * Passwords come from --password or, on a terminal, a prompt; they are never printed.
 */
import { Command, Option } from "commander";
import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { promptNewPassword } from "@/lib/auth/prompt";
import { createUser, listUsers, removeUser, updateUser, type Role, type UserView } from "@/lib/auth/users";
import { printTable, runCli } from "@/lib/cli/run";
import { loadDotEnv } from "@/lib/config/dotenv";

loadDotEnv();

const CLI = { email: "cli" };

interface UserOptions {
  email: string;
  password?: string | true;
  role?: string;
  apps?: string;
  disabled?: boolean;
  newEmail?: string;
  json?: boolean;
}

const splitApps = (apps: string) => apps.split(",").map((a) => a.trim()).filter(Boolean);

function role(value: string | undefined): Role | undefined {
  if (value === undefined) return undefined;
  if (value !== "admin" && value !== "viewer") throw new Error("--role must be admin or viewer");
  return value;
}

async function password(value: string | true | undefined, required: boolean): Promise<string | undefined> {
  if (typeof value === "string") return value;
  if (value === true || required) return promptNewPassword();
  return undefined;
}

function describe(u: UserView): string {
  return `${u.email} (${u.role}${u.disabled ? ", disabled" : ""}${u.role === "viewer" ? `, apps: ${u.apps.join(",") || "none"}` : ""})`;
}

const program = new Command("users").description("Manage the people who sign in to Callboard").exitOverride();

program
  .command("add")
  .description("add a user")
  .requiredOption("--email <email>", "sign-in email")
  .option("--password [password]", "password (prompted on a terminal when omitted)")
  .addOption(new Option("--role <role>", "admin or viewer").default("viewer"))
  .option("--apps <a,b>", "app ids a viewer may see, comma-separated")
  .option("--disabled", "create the account disabled")
  .action(async (o: UserOptions) => {
    const warehouse = db();
    const user = await createUser(warehouse, {
      email: o.email,
      password: (await password(o.password, true))!,
      role: role(o.role),
      apps: o.apps === undefined ? [] : splitApps(o.apps),
      disabled: o.disabled ?? false,
    });
    await audit(warehouse, CLI, "user.create", user.email, { role: user.role, apps: user.apps, disabled: user.disabled });
    console.log(`Added ${describe(user)}`);
  });

program
  .command("update")
  .description("change a user's password, role, apps or status")
  .requiredOption("--email <email>", "the user to change")
  .option("--password [password]", "new password (give the flag alone to be prompted)")
  .option("--role <role>", "admin or viewer")
  .option("--apps <a,b>", "replace the granted app ids (\"\" for none)")
  .addOption(new Option("--disabled", "disable the account (ends its sessions and tokens)"))
  .addOption(new Option("--no-disabled", "enable the account"))
  .option("--new-email <email>", "change the sign-in email")
  .action(async (o: UserOptions) => {
    const warehouse = db();
    const pw = await password(o.password, false);
    const user = await updateUser(warehouse, o.email, {
      email: o.newEmail,
      password: pw,
      role: role(o.role),
      apps: o.apps === undefined ? undefined : splitApps(o.apps),
      disabled: o.disabled,
    });
    await audit(warehouse, CLI, "user.update", user.email, { role: user.role, apps: user.apps, disabled: user.disabled, passwordChanged: pw !== undefined });
    console.log(`Updated ${describe(user)}`);
  });

program
  .command("list")
  .description("list users")
  .option("--json", "print JSON")
  .action(async (o: { json?: boolean }) => {
    const users = await listUsers(db());
    if (o.json) return console.log(JSON.stringify(users, null, 2));
    if (users.length === 0) return console.log("No user yet. Add one with: npm run users -- add --email … --role admin");
    printTable(
      users.map((u) => ({
        id: u.id,
        email: u.email,
        role: u.role,
        apps: u.role === "admin" ? "(all)" : u.apps.join(",") || "(none)",
        status: u.disabled ? "disabled" : "active",
      })),
    );
  });

program
  .command("remove")
  .description("remove a user, their grants and their API tokens")
  .requiredOption("--email <email>", "the user to remove")
  .action(async (o: { email: string }) => {
    const warehouse = db();
    const user = await removeUser(warehouse, o.email);
    await audit(warehouse, CLI, "user.remove", user.email);
    console.log(`Removed ${user.email}`);
  });

void runCli(async () => {
  await program.parseAsync(process.argv);
});
