import { handleReport } from "@/lib/analytics/report-handler";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return handleReport(request, "recordings");
}
