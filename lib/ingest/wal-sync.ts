import { closeSync, fsync, fsyncSync, openSync } from "node:fs";
import path from "node:path";

/**
 * Durability without blocking the event loop. The ingest connection commits with
 * `synchronous = NORMAL`: a commit appends its frames to the WAL file with write() and
 * returns without fsync. This fsyncs the WAL file from libuv's thread pool; once it
 * returns, every frame written before it started is on stable storage, and a crash
 * recovery replays those transactions from the WAL. Deliveries are answered only
 * then. Meanwhile the event loop keeps parsing requests, and the next batch commits.
 *
 * Why it holds: fsync flushes the file's dirty pages whichever descriptor wrote them;
 * the WAL file (same inode) lives as long as a connection to the database is open
 * (this one is); before SQLite restarts the WAL from its start (after a checkpoint) it
 * has synced the checkpointed database file (NORMAL syncs at checkpoints), and the new
 * header and frames are flushed by the next fsync here.
 *
 * One fsync runs at a time; callers that arrive meanwhile share the next one (group
 * fsync), which starts after their commits, so it covers them.
 */
export class WalSyncer {
  private fd: number | null = null;
  private inFlight = false;
  private waiting: Array<(error?: Error) => void> = [];
  /** fsyncs issued: for tests and the benchmark. */
  syncs = 0;

  constructor(private readonly databaseFile: string) {}

  private open(): number {
    if (this.fd === null) {
      this.fd = openSync(`${this.databaseFile}-wal`, "r");
      // The WAL's directory entry must be durable too. Some systems cannot open or fsync
      // a directory (Windows): there the entry's durability is the file system's own.
      try {
        const dir = openSync(path.dirname(path.resolve(this.databaseFile)), "r");
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
      } catch {
        // best effort, see above
      }
    }
    return this.fd;
  }

  /** Calls `done` once everything committed before this call is on disk. */
  sync(done: (error?: Error) => void): void {
    this.waiting.push(done);
    if (!this.inFlight) this.run();
  }

  private run(): void {
    const batch = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      fd = this.open();
    } catch (error) {
      for (const done of batch) done(error as Error);
      return;
    }
    this.inFlight = true;
    this.syncs += 1;
    fsync(fd, (error) => {
      this.inFlight = false;
      for (const done of batch) done(error ?? undefined);
      if (this.waiting.length > 0) this.run();
    });
  }

  /** On shutdown: one blocking fsync covers everything committed; waiting callers are answered. */
  flushSync(): void {
    if (this.fd === null && this.waiting.length === 0) return;
    let error: Error | undefined;
    try {
      fsyncSync(this.open());
    } catch (e) {
      error = e as Error;
    }
    const batch = this.waiting;
    this.waiting = [];
    for (const done of batch) done(error);
    // A descriptor still in use by an fsync in flight is left to the process's exit.
    if (!this.inFlight && this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }
}
