import type { Metadata } from "next";
import Link from "next/link";
import { db } from "@/db";
import { listAudit } from "@/lib/auth/audit";
import { currentAdmin } from "@/lib/auth/session";
import { LocalTime } from "@/components/local-time";
import { ScrollBox } from "@/components/scroll-box";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

const PAGE = 100;

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await currentAdmin();
  const raw = (await searchParams).before;
  const before = typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : undefined;
  const entries = await listAudit(db(), { limit: PAGE, before });
  const last = entries.at(-1);
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>Audit log</h1>
      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Admin actions, newest first</h2>
        {entries.length === 0 ? (
          <p className="muted">Nothing recorded yet.</p>
        ) : (
          <ScrollBox labelledBy="audit-heading">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.id}>
                    <td><LocalTime ms={e.atMs} seconds /></td>
                    <td>{e.actor}</td>
                    <td><code>{e.action}</code></td>
                    <td>{e.target ?? ""}</td>
                    <td><code className="muted">{e.details ? JSON.stringify(e.details) : ""}</code></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
        {entries.length === PAGE && last ? (
          <p><Link href={`/settings/audit?before=${last.id}`}>Older entries</Link></p>
        ) : null}
      </section>
    </main>
  );
}
