/**
 * `npm run tokens -- create|list|revoke …`: API tokens for scripts.
 * `create` prints the token once on stdout (and nothing else there), so
 * `TOKEN=$(npm run -s tokens -- create --email me@example.com)` works.
 */
import { Command } from "commander";
import { db } from "@/db";
import { audit } from "@/lib/auth/audit";
import { createApiToken, listApiTokens, parseTokenExpiry, parseTokenScope, revokeApiToken, tokenStatus } from "@/lib/auth/tokens";
import { resolveUser } from "@/lib/auth/users";
import { printTable, runCli } from "@/lib/cli/run";
import { loadDotEnv } from "@/lib/config/dotenv";

loadDotEnv();

const CLI = { email: "cli" };
const when = (ms: number | null) => (ms ? new Date(ms).toISOString() : "never");

const program = new Command("tokens").description("Manage API tokens (Authorization: Bearer <token>)").exitOverride();

program
  .command("create")
  .description("create a token for a user and print it once")
  .requiredOption("--email <email>", "the user whose rights the token carries")
  .option("--name <name>", "what the token is for")
  .option("--scope <scope>", "full (the user's rights) or read (reports, CSV and statements; no writes)", "full")
  .option("--expires <duration>", "refuse the token after this long: 12h, 30d, 8w (default: never)")
  .action(async (o: { email: string; name?: string; scope: string; expires?: string }) => {
    const scope = parseTokenScope(o.scope);
    const expiresMs = parseTokenExpiry(o.expires);
    const warehouse = db();
    const user = await resolveUser(warehouse, o.email);
    if (user.disabled) throw new Error(`${user.email} is disabled: its tokens would not work`);
    const { token, view } = await createApiToken(warehouse, { userId: user.pk, name: o.name, scope, expiresMs });
    await audit(warehouse, CLI, "token.create", `token ${view.id}`, { name: view.name, for: view.email, scope, expires: when(expiresMs) });
    const rights = scope === "read" ? `${user.role}, read-only` : user.role;
    console.error(`Token ${view.id} "${view.name}" for ${view.email} (${rights}), expires ${when(expiresMs)}. It is shown only now:`);
    console.log(token);
  });

program
  .command("list")
  .description("list tokens (never their secret part)")
  .option("--email <email>", "only this user's tokens")
  .option("--json", "print JSON")
  .action(async (o: { email?: string; json?: boolean }) => {
    const warehouse = db();
    const userId = o.email ? (await resolveUser(warehouse, o.email)).pk : undefined;
    const tokens = await listApiTokens(warehouse, { userId });
    if (o.json) return console.log(JSON.stringify(tokens, null, 2));
    if (tokens.length === 0) return console.log("No token. Create one with: npm run tokens -- create --email …");
    printTable(
      tokens.map((t) => ({
        id: t.id,
        name: t.name,
        user: t.email,
        token: `${t.prefix}…`,
        created: when(t.createdMs),
        lastUsed: when(t.lastUsedMs),
        scope: t.scope,
        expires: when(t.expiresMs),
        status: tokenStatus(t),
      })),
    );
  });

program
  .command("revoke")
  .description("revoke a token (it stops working at once)")
  .requiredOption("--id <id>", "token id, from tokens list")
  .action(async (o: { id: string }) => {
    if (!/^\d+$/.test(o.id)) throw new Error("--id must be a token id (a number; see tokens list)");
    const warehouse = db();
    const view = await revokeApiToken(warehouse, Number(o.id));
    await audit(warehouse, CLI, "token.revoke", `token ${view.id}`, { name: view.name, for: view.email });
    console.log(`Revoked token ${view.id} "${view.name}" of ${view.email}`);
  });

void runCli(async () => {
  await program.parseAsync(process.argv);
});
