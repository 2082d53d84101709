import type { Metadata } from "next";
import Link from "next/link";
import { db } from "@/db";
import { listApps } from "@/lib/apps/registry";
import { currentAdmin } from "@/lib/auth/session";
import { listPriceSheets } from "@/lib/billing/price-sheets";
import { ROUNDING_RULE } from "@/lib/billing/money";
import { LocalTime } from "@/components/local-time";
import { RemovePriceSheetForm, SetPriceSheetForm } from "./price-forms";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Price sheets" };

export default async function PricesPage() {
  await currentAdmin();
  const warehouse = db();
  const sheets = await listPriceSheets(warehouse);
  const apps = (await listApps(warehouse)).map(({ appId, name }) => ({ appId, name }));
  const thisMonth = new Date().toISOString().slice(0, 7);
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>Price sheets</h1>
      <p className="muted">
        What each tenant app pays, for its <Link href="/statements">usage statements</Link>. An app without a sheet of its own uses the account default.
        A sheet is in force from its month until the next sheet of the same app; a change never rewrites an earlier month, and months already issued cannot be re-priced.
        {" "}{ROUNDING_RULE}
      </p>
      <section className="card" aria-labelledby="set-prices">
        <h2 id="set-prices">Set prices</h2>
        <SetPriceSheetForm apps={apps} month={thisMonth} />
      </section>
      <section className="card section" aria-labelledby="all-sheets">
        <h2 id="all-sheets">All sheets</h2>
        {sheets.length === 0 ? (
          <p className="muted">No price sheet yet: statements show usage only.</p>
        ) : (
          <div className="table-scroll">
            <table data-testid="price-sheets">
              <thead>
                <tr>
                  <th scope="col">For</th>
                  <th scope="col">From</th>
                  <th scope="col">Currency</th>
                  <th scope="col" className="num">Audio / min</th>
                  <th scope="col" className="num">Video / min</th>
                  <th scope="col" className="num">Recording</th>
                  <th scope="col" className="num">Included min</th>
                  <th scope="col" className="num">Minimum</th>
                  <th scope="col">Updated</th>
                  <th scope="col"><span className="muted">Action</span></th>
                </tr>
              </thead>
              <tbody>
                {sheets.map((s) => {
                  const who = s.app ? `${s.appName} (${s.app})` : "Account default";
                  return (
                    <tr key={s.id} data-sheet={`${s.app ?? "default"}:${s.effectiveMonth}`}>
                      <td>{who}</td>
                      <td>{s.effectiveMonth}</td>
                      <td>{s.currency}</td>
                      <td className="num">{s.audioPerMinute}</td>
                      <td className="num">{s.videoPerMinute}</td>
                      <td className="num">{s.perRecording}</td>
                      <td className="num">{s.includedMinutes}</td>
                      <td className="num">{s.monthlyMinimum}</td>
                      <td><LocalTime ms={s.updatedMs} /> by {s.updatedBy}</td>
                      <td><RemovePriceSheetForm app={s.app} effectiveMonth={s.effectiveMonth} label={`${who} from ${s.effectiveMonth}`} /></td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </main>
  );
}
