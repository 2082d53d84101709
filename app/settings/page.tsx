import type { Metadata } from "next";
import Link from "next/link";
import { db } from "@/db";
import "@/app/_ops/ops.css";
import { formatInt } from "@/app/_ops/format";
import { listApps } from "@/lib/apps/registry";
import { listAudit } from "@/lib/auth/audit";
import { currentAdmin } from "@/lib/auth/session";
import { listApiTokens } from "@/lib/auth/tokens";
import { listUsers } from "@/lib/auth/users";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Settings" };

export default async function SettingsPage() {
  await currentAdmin();
  const warehouse = db();
  const apps = listApps(warehouse);
  const users = await listUsers(warehouse);
  const tokens = (await listApiTokens(warehouse)).filter((t) => !t.revoked);
  const [lastAudit] = await listAudit(warehouse, { limit: 1 });
  const links = [
    {
      href: "/settings/apps",
      title: "Tenant apps and webhooks",
      text: `${formatInt(apps.length)} app${apps.length === 1 ? "" : "s"}: API keys, Calls API address, webhook settings and the ingest URL to paste into the platform.`,
    },
    { href: "/settings/users", title: "Users and grants", text: `${formatInt(users.length)} user${users.length === 1 ? "" : "s"}: roles, the apps each viewer may see, sign-in access.` },
    { href: "/settings/prices", title: "Price sheets", text: "What each tenant app pays per audio and video participant-minute and per recording, for the usage statements." },
    { href: "/settings/tokens", title: "API tokens", text: `${formatInt(tokens.length)} active token${tokens.length === 1 ? "" : "s"} for scripts (CSV and JSON exports).` },
    { href: "/settings/audit", title: "Audit log", text: lastAudit ? `Every admin action; the latest: ${lastAudit.action} by ${lastAudit.actor}.` : "Every admin action, newest first." },
  ];
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>Settings</h1>
      <nav aria-label="Settings">
        <ul className="ops-settings-links">
          {links.map((l) => (
            <li key={l.href}>
              <Link href={l.href} className="card">
                <strong>{l.title}</strong>
                <p className="muted">{l.text}</p>
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </main>
  );
}
