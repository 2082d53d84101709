import { defineConfig } from "drizzle-kit";

/**
 * Migrations of Callboard's state in Postgres (DATABASE_URL), generated from the tables
 * db/postgres/schema.ts derives from the SQLite definitions: after a change to a state
 * table, `npm run db:generate` writes both dialects' migrations.
 */
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/postgres/schema.ts",
  out: "./db/postgres/migrations",
});
