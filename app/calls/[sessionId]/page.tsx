import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { analyticsEngine, type CallDetail } from "@/lib/analytics";
import { isValidTimeZone } from "@/lib/time/tz";
import { currentCaller } from "@/lib/auth/session";
import { HttpError } from "@/lib/http/errors";
import { PageError } from "@/components/page-error";
import { CallDetailView } from "./call-detail-view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Call" };

type Params = Promise<{ sessionId: string }>;
type Search = Promise<Record<string, string | string[] | undefined>>;

export default async function CallPage({ params, searchParams }: { params: Params; searchParams: Search }) {
  const caller = await currentCaller();
  const { sessionId } = await params;
  const sp = await searchParams;
  const app = typeof sp.app === "string" ? sp.app : undefined;
  const tz = typeof sp.tz === "string" && isValidTimeZone(sp.tz) ? sp.tz : "UTC";
  if (!app) notFound();
  let call: CallDetail;
  try {
    call = await analyticsEngine().call({ app, sessionId: decodeURIComponent(sessionId) }, caller);
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) notFound();
    // The warehouse cannot be reached (503 from the ClickHouse engine): say so, as the
    // report panels do, instead of the generic error page that hides the message.
    if (error instanceof HttpError) return <PageError title="Call" message={error.message} resetHref={`/calls/${encodeURIComponent(decodeURIComponent(sessionId))}?app=${encodeURIComponent(app)}`} resetLabel="Try again" />;
    throw error;
  }
  return (
    <main id="main" tabIndex={-1} className="container dash">
      <CallDetailView call={call} tz={tz} isAdmin={caller.role === "admin"} back={typeof sp.back === "string" ? sp.back : undefined} />
    </main>
  );
}
