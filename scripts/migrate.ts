/** `npm run db:migrate`: applies pending migrations to DATABASE_PATH. */
import { env } from "@/lib/config/env";
import { loadDotEnv } from "@/lib/config/dotenv";
import { openDatabase } from "@/db/client";

loadDotEnv();
try {
  const file = env().DATABASE_PATH;
  openDatabase(file).$client.close();
  console.log(`Migrated ${file}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
