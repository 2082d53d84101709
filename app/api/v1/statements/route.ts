import { handleStatementsGet, handleStatementsPost } from "@/lib/billing/statements-handler";

export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return handleStatementsGet(request);
}

export function POST(request: Request): Promise<Response> {
  return handleStatementsPost(request);
}
