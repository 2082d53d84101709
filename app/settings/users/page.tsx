import type { Metadata } from "next";
import { db } from "@/db";
import { listApps } from "@/lib/apps/registry";
import { currentAdmin } from "@/lib/auth/session";
import { listUsers } from "@/lib/auth/users";
import { AddUserForm, EditUserForm, type AppOption } from "./user-forms";
import { ScrollBox } from "@/components/scroll-box";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Users" };

export default async function UsersPage() {
  await currentAdmin();
  const warehouse = db();
  const users = await listUsers(warehouse);
  const apps: AppOption[] = listApps(warehouse).map((a) => ({ appId: a.appId, name: a.name }));
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>Users</h1>
      <section className="card" aria-labelledby="add-user">
        <h2 id="add-user">Add a user</h2>
        <AddUserForm apps={apps} />
      </section>
      <section className="card section" aria-labelledby="all-users">
        <h2 id="all-users">All users</h2>
        <ScrollBox labelledBy="all-users">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Apps</th>
                <th scope="col">Status</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.id} data-user={u.email}>
                  <td>{u.email}</td>
                  <td>{u.role}</td>
                  <td>{u.role === "admin" ? <span className="muted">all</span> : u.apps.join(", ") || <span className="muted">none</span>}</td>
                  <td>{u.disabled ? "disabled" : "active"}</td>
                  <td>
                    <details>
                      <summary>Edit</summary>
                      <EditUserForm user={u} apps={apps} />
                    </details>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      </section>
    </main>
  );
}
