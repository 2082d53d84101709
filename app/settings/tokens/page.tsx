import type { Metadata } from "next";
import { db } from "@/db";
import { nowMs } from "@/app/_ops/format";
import { LocalTime } from "@/components/local-time";
import { ScrollBox } from "@/components/scroll-box";
import { currentAdmin } from "@/lib/auth/session";
import { listApiTokens, tokenStatus } from "@/lib/auth/tokens";
import { listUsers } from "@/lib/auth/users";
import { CreateTokenForm, RevokeTokenForm } from "./token-forms";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API tokens" };

const when = (ms: number | null) => (ms ? <LocalTime ms={ms} /> : "never");

export default async function TokensPage() {
  await currentAdmin();
  const warehouse = db();
  const tokens = await listApiTokens(warehouse);
  const now = nowMs();
  const emails = (await listUsers(warehouse)).filter((u) => !u.disabled).map((u) => u.email);
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>API tokens</h1>
      <p className="muted">
        Scripts send <code>Authorization: Bearer &lt;token&gt;</code>. A full token gets exactly the rights of its user; a read
        token only reads (reports, CSV, statements) and changes nothing.
      </p>
      <section className="card" aria-labelledby="create-token">
        <h2 id="create-token">Create a token</h2>
        <CreateTokenForm emails={emails} />
      </section>
      <section className="card section" aria-labelledby="all-tokens">
        <h2 id="all-tokens">All tokens</h2>
        {tokens.length === 0 ? (
          <p className="muted">No token yet.</p>
        ) : (
          <ScrollBox labelledBy="all-tokens">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">User</th>
                <th scope="col">Token</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Scope</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col"><span className="muted">Action</span></th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id} data-token-id={t.id}>
                  <td>{t.name}</td>
                  <td>{t.email}</td>
                  <td><code>{t.prefix}…</code></td>
                  <td>{when(t.createdMs)}</td>
                  <td>{when(t.lastUsedMs)}</td>
                  <td>{t.scope}</td>
                  <td>{when(t.expiresMs)}</td>
                  <td>{tokenStatus(t, now)}</td>
                  <td>{t.revoked ? null : <RevokeTokenForm id={t.id} name={t.name} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
          </ScrollBox>
        )}
      </section>
    </main>
  );
}
