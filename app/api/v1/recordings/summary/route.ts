import { handleReport } from "@/lib/analytics/http";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return handleReport(request, "recording-summary");
}
