import { db } from "@/db";
import { withClickHouseHealth } from "@/lib/health/clickhouse-health";
import { getHealth } from "@/lib/health/health";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const health = await withClickHouseHealth(getHealth(db), db);
  return Response.json(health, {
    status: health.status === "ok" ? 200 : 503,
    headers: { "Cache-Control": "no-store" },
  });
}
