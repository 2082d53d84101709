import { db } from "@/db";
import { getAppSummaries } from "@/lib/apps/summary";
import { appScope } from "@/lib/auth/authorize";
import { currentCaller } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

const minutes = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });
const count = new Intl.NumberFormat("en");

export default async function HomePage() {
  const caller = await currentCaller();
  const summaries = getAppSummaries(db(), appScope(caller));
  return (
    <main className="container">
      <h1>Callboard</h1>
      <section className="card" aria-labelledby="apps-heading">
        <h2 id="apps-heading">Tenant apps</h2>
        {summaries.length === 0 ? (
          <p className="muted">No tenant app yet. Add one with <code>npm run apps -- add</code>.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Region</th>
                <th scope="col" className="num">Calls</th>
                <th scope="col" className="num">Audio minutes</th>
                <th scope="col" className="num">Video minutes</th>
                <th scope="col">Last sync</th>
              </tr>
            </thead>
            <tbody>
              {summaries.map((s) => (
                <tr key={s.appId} data-app={s.appId}>
                  <td>
                    {s.name} <span className="muted">({s.appId})</span>
                  </td>
                  <td>{s.region}</td>
                  <td className="num" data-testid="calls">{count.format(s.calls)}</td>
                  <td className="num">{minutes.format(s.audioMinutes)}</td>
                  <td className="num">{minutes.format(s.videoMinutes)}</td>
                  <td>{s.lastSuccessfulSyncMs ? new Date(s.lastSuccessfulSyncMs).toISOString() : "never"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </main>
  );
}
