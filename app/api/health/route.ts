import { db } from "@/db";
import { healthResponse } from "@/lib/health/health-response";

export const dynamic = "force-dynamic";

export function GET(): Promise<Response> {
  return healthResponse(db);
}
