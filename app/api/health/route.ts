import { db } from "@/db";
import { healthResponse } from "@/lib/health/health";

export const dynamic = "force-dynamic";

export function GET(): Response {
  return healthResponse(db);
}
