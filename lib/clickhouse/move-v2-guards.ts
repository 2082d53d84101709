import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { ClickHouse } from "./client";
import { qualified, type Placement } from "./schema";
import { sql } from "./sql";

/**
 * What keeps the move to v2 (move-v2.ts) from waiting forever: one mover at a time over
 * the whole warehouse (a lease), and a bound on every statement it sends
 * (docs/decisions/0045-one-bounded-mover.md).
 *
 * Why a lease: two movers at once deadlock ClickHouse 18.16. One mover's `ALTER … DROP
 * PARTITION` queues for the table's lock behind the other's INSERT into the Distributed
 * table; that INSERT waits for the part it forwarded to the same local table, which queues
 * behind the ALTER. None of the three can be killed (KILL QUERY marks them cancelled, they
 * wait on), only a restart of the server ends them. A second mover is easy to get: a
 * `kill -9` of `npm run db:migrate` ends npm, not the node process that moves, which goes
 * on beside the next run.
 *
 * The lease lives in ClickHouse itself (every run of `db:migrate`, whatever its state
 * database, reaches the same warehouse), on the first server, by that server's clock: a
 * run claims it (a row with its owner and the time), renews it every fifth of its length,
 * and holds it while its claim is the earliest among the claims renewed within the lease.
 * ClickHouse has no compare-and-set, so a claim is read back only after a settling pause:
 * two runs starting in the same second both see both claims and agree on the earlier
 * (ties: the smaller owner). A run killed stops renewing; the next one waits for its lease
 * to lapse, then takes over. A run that finds the lease renewed by a live mover for longer
 * than one lease gives up with MoveBusyError, having changed nothing.
 */

export const MOVE_LEASE_TABLE = "v2_move_lease";

/** The lease table (ReplacingMergeTree: a run's renewals collapse to one row). */
export function moveLeaseStatement(p: Placement): string {
  return `CREATE TABLE IF NOT EXISTS ${qualified(p.database, MOVE_LEASE_TABLE)} (owner String, claimed DateTime, renewed DateTime, ended UInt8) ENGINE = ReplacingMergeTree(renewed) ORDER BY owner`;
}

/** How long a claim stays valid unless renewed (default), seconds. */
export const MOVE_LEASE_SECONDS = 10;

/** Another `db:migrate` is moving the warehouse: this run changed nothing. */
export class MoveBusyError extends Error {
  constructor(
    readonly warehouse: string,
    readonly holder: string,
    readonly renewedSecondsAgo: number,
  ) {
    super(
      `another npm run db:migrate (${holder}) is moving ${warehouse} to schema v2: its lease was renewed ${renewedSecondsAgo} s ago. ` +
        `This run changed nothing; wait for that one to end (or stop that process), then run npm run db:migrate again.`,
    );
    this.name = "MoveBusyError";
  }
}

/** The lease passed to another run while this one was moving (this process stalled longer than the lease). */
export class MoveLeaseLostError extends Error {
  constructor(readonly warehouse: string, readonly holder: string) {
    super(`the move of ${warehouse} to schema v2 stopped: its lease passed to ${holder} (this run stalled longer than the lease); run npm run db:migrate again once no other run is moving`);
    this.name = "MoveLeaseLostError";
  }
}

/** A statement of the move that did not end within its bound: names the server and the query. */
export class MoveStalledError extends Error {
  constructor(
    readonly server: string,
    readonly statement: string,
    readonly queryIds: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(
      `the move to schema v2 stopped: ClickHouse ${server} did not finish ${statement} (query_id ${queryIds.join(", ")}) within ${timeoutMs / 1000} s ` +
        `(CLICKHOUSE_MOVE_STATEMENT_TIMEOUT_SECONDS). It was asked to stop (KILL QUERY); on ClickHouse 18.16 a statement waiting for a table lock stops only when the server restarts: ` +
        `look for it in that server's system.processes, then run npm run db:migrate again (the month is rewritten whole).`,
    );
    this.name = "MoveStalledError";
  }
}

/** The start of a statement, for an error message (never holds a value a user typed: the move's SQL is built by code). */
export function statementHead(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 90 ? `${flat.slice(0, 90)}…` : flat;
}

/**
 * `run` (a statement sent with `queryId`), or MoveStalledError after `timeoutMs`; the
 * statement is then asked to stop on the server (KILL QUERY … ASYNC, itself not awaited:
 * the server may be the one that hangs).
 */
export async function bounded<T>(server: ClickHouse, statement: string, queryId: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void server.command(`KILL QUERY WHERE query_id = '${queryId}' ASYNC`).catch(() => undefined);
      reject(new MoveStalledError(server.label, statementHead(statement), [queryId], timeoutMs));
    }, timeoutMs);
    // The request itself keeps the process alive while it waits; the timer must not keep it alive after.
    timer.unref();
  });
  try {
    return await Promise.race([run(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number, unref = false) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    if (unref) t.unref();
  });

const RELEASE_WAIT_MS = 5_000;

export interface LeaseTiming {
  /** How long a claim stays valid unless renewed, seconds. */
  leaseSeconds: number;
  /** The pause between claiming and reading the claims back, ms (longer than a claim's insert and the clock's second). */
  settleMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { leaseSeconds: MOVE_LEASE_SECONDS, settleMs: 2_000 };

interface Holder {
  owner: string;
  ago: number;
}

/** One run's lease of the move, on `server` (the cluster's first). */
export class MoveLease {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  private renewal: NodeJS.Timeout | undefined;
  private readonly table: string;

  constructor(
    private readonly server: ClickHouse,
    p: Placement,
    private readonly warehouse: string,
    private readonly timing: LeaseTiming = DEFAULT_LEASE_TIMING,
    private readonly bound: <T>(statement: string, run: (queryId: string) => Promise<T>) => Promise<T>,
  ) {
    this.table = qualified(p.database, MOVE_LEASE_TABLE);
  }

  /** The run that holds the lease now (undefined: no live claim). */
  async holder(): Promise<Holder | undefined> {
    const q = `SELECT owner, min(claimed) AS first_claimed, max(renewed) AS last_renewed, toUInt32(now() - max(renewed)) AS ago FROM ${this.table}
      GROUP BY owner HAVING max(ended) = 0 AND max(renewed) > now() - ${this.timing.leaseSeconds} ORDER BY first_claimed, owner LIMIT 1`;
    const [row] = await this.bound(q, (id) => this.server.rows<{ owner: string; ago: number }>(q, undefined, id));
    return row ? { owner: row.owner, ago: Number(row.ago) } : undefined;
  }

  /**
   * Claims the lease and waits, at most one lease and a settling pause, until this run
   * holds it: a killed run's claim lapses within that; a live mover keeps renewing, and
   * this run then throws MoveBusyError (its claim is ended, nothing else written).
   */
  async acquire(): Promise<void> {
    const owner = sql`${this.owner}`.text;
    await this.write(`INSERT INTO ${this.table} (owner, claimed, renewed, ended) SELECT ${owner}, now(), now(), 0`);
    this.renewal = setInterval(() => void this.write(this.renewStatement()).catch(() => undefined), (this.timing.leaseSeconds * 1000) / 5);
    this.renewal.unref();
    const deadline = Date.now() + this.timing.leaseSeconds * 1000 + this.timing.settleMs * 2;
    await sleep(this.timing.settleMs);
    for (;;) {
      const holder = await this.holder();
      if (holder?.owner === this.owner) return;
      if (Date.now() > deadline) {
        await this.release();
        throw new MoveBusyError(this.warehouse, holder?.owner ?? "unknown", holder?.ago ?? 0);
      }
      await sleep(1_000);
    }
  }

  /**
   * Before each month: throws MoveLeaseLostError if another run holds the lease now, else
   * renews it. A claim that lapsed with no one else claiming is taken up again: an
   * embedded ClickHouse (chdb) blocks the event loop while it works, so the renewal timer
   * may not have run.
   */
  async check(): Promise<void> {
    const holder = await this.holder();
    if (holder !== undefined && holder.owner !== this.owner) throw new MoveLeaseLostError(this.warehouse, holder.owner);
    await this.write(this.renewStatement());
  }

  private renewStatement(): string {
    const owner = sql`${this.owner}`.text;
    return `INSERT INTO ${this.table} (owner, claimed, renewed, ended) SELECT owner, min(claimed), now(), 0 FROM ${this.table} WHERE owner = ${owner} GROUP BY owner`;
  }

  /**
   * Stops renewing and ends the claim, so the next run need not wait for it to lapse. At
   * most a few seconds (it runs after a failure too, maybe against the server that hangs):
   * a claim not ended lapses by itself.
   */
  async release(): Promise<void> {
    clearInterval(this.renewal);
    this.renewal = undefined;
    const owner = sql`${this.owner}`.text;
    const ended = this.write(`INSERT INTO ${this.table} (owner, claimed, renewed, ended) SELECT ${owner}, now(), now(), 1`).catch(() => undefined);
    await Promise.race([ended, sleep(RELEASE_WAIT_MS, true)]);
  }

  private write(statement: string): Promise<void> {
    return this.bound(statement, (id) => this.server.command(statement, undefined, id));
  }
}
