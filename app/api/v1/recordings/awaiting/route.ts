import { handleReport } from "@/lib/analytics/http";
import { REPORTS } from "@/lib/analytics/reports";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return handleReport(request, REPORTS["recordings-awaiting"]);
}
