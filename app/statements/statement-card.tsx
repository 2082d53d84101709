"use client";

import Link from "next/link";
import { useActionState, useEffect } from "react";
import type { ActionState } from "@/lib/auth/route-support";
import { formatMoney, isZero } from "@/lib/billing/money";
import type { PendingAdjustment } from "@/lib/billing/issued";
import type { Statement } from "@/lib/billing/statements";
import type { Usage } from "@/lib/billing/pricing";
import { formatCount, formatDateTime, formatMinutes } from "@/lib/ui/format";
import { issueStatementAction } from "./actions";

/** "2026-03" → "March 2026". */
export function monthLabel(month: string): string {
  const [y, m] = month.split("-").map(Number);
  return new Intl.DateTimeFormat("en", { month: "long", year: "numeric", timeZone: "UTC" }).format(new Date(Date.UTC(y, m - 1, 1)));
}

/** "1234.500" → "1,234.5" (minutes as exact text, grouped, trailing zeros dropped). */
function minutes(text: string): string {
  const [int, frac = ""] = text.replace(/^-/, "").split(".");
  const f = frac.replace(/0+$/, "");
  return `${text.startsWith("-") ? "−" : ""}${int.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}${f ? `.${f}` : ""}`;
}

const signed = (n: number) => (n > 0 ? `+${formatCount(n)}` : formatCount(n));
const signedMinutes = (text: string) => (text.startsWith("-") ? minutes(text) : `+${minutes(text)}`);

function changeText(delta: Usage): string {
  return [
    `${signed(delta.calls)} calls`,
    `${signedMinutes(delta.audioMinutes)} audio min`,
    `${signedMinutes(delta.videoMinutes)} video min`,
    `${signed(delta.recordings)} recordings`,
  ].join(", ");
}

function UsageFacts({ usage }: { usage: Usage }) {
  return (
    <dl className="facts statement-usage">
      <div><dt>Calls</dt><dd>{formatCount(usage.calls)}</dd></div>
      {/* Written as everywhere on the dashboard ("70h 13m"); the exact minutes billed are in the lines below and the title. */}
      <div><dt>Participant minutes, audio</dt><dd title={`${minutes(usage.audioMinutes)} minutes`}>{formatMinutes(Number(usage.audioMinutes))}</dd></div>
      <div><dt>Participant minutes, video</dt><dd title={`${minutes(usage.videoMinutes)} minutes`}>{formatMinutes(Number(usage.videoMinutes))}</dd></div>
      <div><dt>Recordings</dt><dd>{formatCount(usage.recordings)}</dd></div>
      <div><dt>Participants</dt><dd>{formatCount(usage.participants)}</dd></div>
    </dl>
  );
}

function Pending({ p }: { p: PendingAdjustment }) {
  return (
    <p className="statement-pending" role="note" data-testid="pending-adjustment">
      <strong>Pending adjustment: {formatMoney(p.amount, p.currency)}.</strong> Since this statement was {isZero(p.carried) ? "issued" : "last adjusted"}, the
      month&apos;s usage changed ({changeText(p.delta)}). Priced with the issued prices it now comes to {formatMoney(p.repricedTotal, p.currency)}; the next
      statement of this app can carry the difference.
    </p>
  );
}

function IssueForm({ s, onIssued }: { s: Statement; onIssued: () => void }) {
  const [state, action, pending] = useActionState<ActionState, FormData>(issueStatementAction, {});
  // Issued: read the month again (the card turns into the issued statement).
  useEffect(() => {
    if (state.ok) onIssued();
  }, [state.ok, state.at, onIssued]);
  const carried = s.lines.filter((l) => l.kind === "adjustment").length;
  return (
    <form action={action} className="statement-issue no-print" aria-label={`Issue the statement of ${s.name}`}>
      <input type="hidden" name="month" value={s.month} />
      <input type="hidden" name="tz" value={s.timeZone} />
      <input type="hidden" name="app" value={s.app} />
      {carried > 0 ? (
        <label className="inline-field">
          <input type="checkbox" name="carry" defaultChecked /> Carry {carried} pending adjustment{carried === 1 ? "" : "s"}
        </label>
      ) : (
        <input type="hidden" name="carry" value="on" />
      )}
      <button type="submit" className="btn" disabled={pending}>Issue statement</button>
      {state.error ? <p className="alert" role="alert">{state.error}</p> : null}
      {state.ok ? <p className="notice" role="status">{state.ok}</p> : null}
    </form>
  );
}

/** One app's statement: usage, priced lines, total, issue state; printed on a page of its own. */
export function StatementCard({ statement: s, rounding, isAdmin, onIssued }: { statement: Statement; rounding: string; isAdmin: boolean; onIssued: () => void }) {
  const money = (amount: string | null) => (amount === null || s.currency === null ? "—" : formatMoney(amount, s.currency));
  const issuedAt = s.issued ? formatDateTime(Date.parse(s.issued.issuedAt) / 1000, "UTC") : null;
  return (
    <article className="card panel statement" data-app={s.app} data-status={s.status} aria-labelledby={`st-${s.app}`}>
      <header className="statement-head">
        <div>
          <h2 id={`st-${s.app}`}>
            {s.name} <span className="muted">({s.app})</span>
          </h2>
          <p className="muted">
            Usage statement for {monthLabel(s.month)}, {s.timeZone} ({formatDateTime(s.from, s.timeZone)} to {formatDateTime(s.to, s.timeZone)})
          </p>
        </div>
        <div className="statement-status" data-testid="statement-status">
          {s.issued ? (
            <>
              <span className="status status-ended">Issued</span> <strong data-testid="statement-number">{s.issued.number}</strong>
              <br />
              <span className="muted">{issuedAt} UTC by {s.issued.issuedBy}</span>
            </>
          ) : s.status === "draft" ? (
            <span className="status status-ongoing">Draft</span>
          ) : (
            <span className="status">No prices</span>
          )}
        </div>
      </header>
      <UsageFacts usage={s.usage} />
      {s.status === "unpriced" ? (
        <p className="muted">
          No price sheet is in force for this app in {s.month}.{isAdmin ? <> Set one in <Link href="/settings/prices">Settings → Price sheets</Link>.</> : null}
        </p>
      ) : (
        <div className="table-scroll">
          <table className="data-table statement-lines">
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col" className="num">Used</th>
                <th scope="col" className="num">Included</th>
                <th scope="col" className="num">Billable</th>
                <th scope="col" className="num">Unit price</th>
                <th scope="col" className="num">Amount ({s.currency})</th>
              </tr>
            </thead>
            <tbody>
              {s.lines.map((l, i) => (
                <tr key={i} data-line={l.kind}>
                  <td>{l.label}</td>
                  <td className="num">{l.quantity === "" ? "" : l.kind === "recordings" ? formatCount(Number(l.quantity)) : minutes(l.quantity)}</td>
                  <td className="num">{l.included === "" || l.kind === "recordings" ? "" : minutes(l.included)}</td>
                  <td className="num">{l.billable === "" ? "" : l.kind === "recordings" ? formatCount(Number(l.billable)) : minutes(l.billable)}</td>
                  <td className="num">{l.unitPrice}</td>
                  <td className="num">{l.amount}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr className="statement-total">
                <th scope="row" colSpan={5}>Total</th>
                <td className="num" data-testid="statement-total">{money(s.total)}</td>
              </tr>
            </tfoot>
          </table>
        </div>
      )}
      {s.pendingAdjustment ? <Pending p={s.pendingAdjustment} /> : null}
      {s.carriedBy.length > 0 ? (
        <p className="muted">Adjustments carried by {s.carriedBy.map((c) => `${c.number} (${c.month}): ${money(c.amount)}`).join("; ")}.</p>
      ) : null}
      {s.notCarried.map((p) => (
        <p key={p.number} className="muted">Not carried (in {p.currency}): the pending adjustment of {p.number} ({p.month}), {formatMoney(p.amount, p.currency)}.</p>
      ))}
      {s.participants ? <ParticipantTable rows={s.participants} /> : null}
      {s.status === "draft" && isAdmin ? (
        s.monthOver ? <IssueForm s={s} onIssued={onIssued} /> : <p className="muted no-print">It can be issued once {monthLabel(s.month)} is over in {s.timeZone}.</p>
      ) : null}
      <p className="statement-rounding muted">{rounding} Recordings are calls with a recording.</p>
    </article>
  );
}

function ParticipantTable({ rows }: { rows: NonNullable<Statement["participants"]> }) {
  return (
    <details className="statement-detail-table" open>
      <summary>Per participant ({formatCount(rows.length)})</summary>
      <div className="table-scroll">
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Participant uid</th>
              <th scope="col" className="num">Calls</th>
              <th scope="col" className="num">Audio min</th>
              <th scope="col" className="num">Video min</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.uid}>
                <td className="mono">{p.uid}</td>
                <td className="num">{formatCount(p.calls)}</td>
                <td className="num">{minutes(p.audioMinutes)}</td>
                <td className="num">{minutes(p.videoMinutes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
