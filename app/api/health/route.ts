import { db } from "@/db";
import { getHealth } from "@/lib/health/health";

export const dynamic = "force-dynamic";

export function GET(): Response {
  const health = getHealth(db);
  return Response.json(health, {
    status: health.status === "ok" ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
